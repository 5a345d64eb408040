    with open(path) as f:
        data = f.read().strip()
