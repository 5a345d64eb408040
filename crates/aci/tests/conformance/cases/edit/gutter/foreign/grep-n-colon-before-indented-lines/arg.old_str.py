5:    with open(path) as f:
6:        data = f.read()
