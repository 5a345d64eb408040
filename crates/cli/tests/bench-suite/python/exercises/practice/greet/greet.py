def greet(name):
    pass
