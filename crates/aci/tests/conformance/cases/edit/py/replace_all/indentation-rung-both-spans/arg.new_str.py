	return int(self.quantity)
