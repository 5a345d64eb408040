def load(path, mode):
    with open(path) as f:
