            self.quantity += amount
            log.debug("restocked %s by %d", self.sku, amount)
