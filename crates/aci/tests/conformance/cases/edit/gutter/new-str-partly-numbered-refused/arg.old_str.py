        for key, value in data.items():
            self.items[key] = value
