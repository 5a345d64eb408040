    def take(self, amount):  
        if amount > self.quantity:   
