        self.quantity -= amount
        return self.quantity