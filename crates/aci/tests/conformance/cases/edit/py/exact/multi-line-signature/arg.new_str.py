    def take(self, amount, allow_negative=False):
        if amount > self.quantity and not allow_negative:
            raise ValueError("not enough stock")
