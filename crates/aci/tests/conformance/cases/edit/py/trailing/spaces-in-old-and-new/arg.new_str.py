    def take(self, amount):  
        if amount > self.quantity or amount < 0:   
