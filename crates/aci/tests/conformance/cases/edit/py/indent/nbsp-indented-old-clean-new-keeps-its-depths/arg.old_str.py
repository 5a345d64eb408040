        s = 0
        for p in self.items:
            s += p
