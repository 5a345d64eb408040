    def take(self, amount):
        self.quantity -= amount
