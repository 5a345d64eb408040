	def restock(self, amount):
		if amount <= 0:
			raise ValueError("amount must be positive")
