    def restock(self, amount):
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.quantity += amount
        log.info("restocked %s by %d (now %d)", self.sku, amount, self.quantity)
