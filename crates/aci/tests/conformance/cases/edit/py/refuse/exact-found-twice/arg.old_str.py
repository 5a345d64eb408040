        return self.quantity
