    raise ValueError("not enough stock")
self.quantity -= amount
return self.quantity
