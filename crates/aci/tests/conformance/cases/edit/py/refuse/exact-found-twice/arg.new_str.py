        return int(self.quantity)
