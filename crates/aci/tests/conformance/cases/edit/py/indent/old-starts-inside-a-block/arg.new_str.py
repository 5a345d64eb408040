    raise ValueError("not enough stock")
self.quantity -= amount
log.info("took %d", amount)
return self.quantity
