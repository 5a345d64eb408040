    def take(self, amount):
        """Remove amount from stock."""
        if amount > self.quantity:
