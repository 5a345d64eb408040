    def load(self):
        with open(self.path) as fh:
            data = json.load(fh)
        for key, value in data.items():
            self.items[key] = value
        return len(self.items)
