        for key, value in data.items():
            self.items[key] = value
        return len(self.items)
