L4: def load(path):
L5:     with open(path) as f:
L6:         data = f.read()
