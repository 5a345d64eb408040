    def take(self, amount):
        if amount > self.quantity:
            raise ValueError("out of stock")
        self.quantity -= amount
        return self.quantity
