	def restock(self, amount):
		if amount <= 0 or amount > 10_000:
			raise ValueError("amount out of range")
