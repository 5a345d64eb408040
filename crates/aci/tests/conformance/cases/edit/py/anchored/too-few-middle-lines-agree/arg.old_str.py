    def restock(self, amount):
        if amount < 1:
            raise ValueError("bad amount")
        self.quantity = self.quantity + amount
        log.info("restocked %s by %d", self.sku, amount)
