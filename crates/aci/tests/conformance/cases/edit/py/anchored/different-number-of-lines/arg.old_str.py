    def take(self, amount):
        if amount > self.quantity:
            raise ValueError("not enough stock")
        log.info("taking %d", amount)
        self.quantity -= amount
