    def take(self, amount):
        if amount > self.quantity:
            raise ValueError("insufficient stock")
            self.quantity -= amount
        return self.quantity
