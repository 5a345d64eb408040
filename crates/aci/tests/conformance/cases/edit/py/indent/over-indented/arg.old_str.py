            self.quantity += amount
            log.info("restocked %s by %d", self.sku, amount)
