class Cart:
    def total(self):
        s = 0
        for p in self.items:
            if p:
                s += p
        return s
