def take(self, amount):
    if amount > self.quantity:
        raise ValueError("not enough stock")
    self.quantity -= amount
