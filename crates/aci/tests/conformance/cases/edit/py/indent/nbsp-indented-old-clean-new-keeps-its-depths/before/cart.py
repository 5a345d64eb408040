class Cart:
    def total(self):
        s = 0
        for p in self.items:
            s += p
        return s
