def subtract(a, b):
    pass
