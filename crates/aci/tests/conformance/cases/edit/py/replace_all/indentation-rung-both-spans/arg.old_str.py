	return self.quantity
