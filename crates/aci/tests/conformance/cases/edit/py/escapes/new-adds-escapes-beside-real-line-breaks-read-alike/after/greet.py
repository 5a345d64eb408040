def greet(name):
    print("hello", name)
    return "ok"
    x = 1
    y = 2
