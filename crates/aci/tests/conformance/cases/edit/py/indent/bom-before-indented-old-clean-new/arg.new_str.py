        for p in self.items:
            s += p * 2
