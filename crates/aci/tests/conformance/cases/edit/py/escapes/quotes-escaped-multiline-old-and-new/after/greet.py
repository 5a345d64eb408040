def greet(name):
    print("hi", name)
    return "ok"
