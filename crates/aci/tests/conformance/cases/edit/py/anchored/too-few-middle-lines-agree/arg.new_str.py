    def restock(self, amount):
        pass
