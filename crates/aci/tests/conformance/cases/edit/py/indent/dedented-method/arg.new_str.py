def take(self, amount):
    if amount > self.quantity:
        raise ValueError(f"only {self.quantity} left")
    self.quantity -= amount
