    def restock(self, amount):
        if amount <= 0:
            raise ValueError("amount must be > 0")
        self.quantity += amount
        log.info("restocked %s by %d", self.sku, amount)
