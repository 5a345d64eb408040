class Loader:
    def __init__(self, root):
        self.root = root

    def load(self, x):
        y = x + 1
        if y > 2:
            return y
        return 0
