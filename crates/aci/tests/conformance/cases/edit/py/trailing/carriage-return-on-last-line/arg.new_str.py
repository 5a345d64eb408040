        self.quantity -= amount
        log.info("took %d of %s", amount, self.sku)
        return self.quantity