import json


class Store:
    def __init__(self, path):
        self.path = path
        self.items = {}

    def load(self):
        with open(self.path) as fh:
            data = json.load(fh)
        for key, value in data.items():
            self.items[key] = value
        return len(self.items)

    def save(self):
        with open(self.path, "w") as fh:
            json.dump(self.items, fh)
