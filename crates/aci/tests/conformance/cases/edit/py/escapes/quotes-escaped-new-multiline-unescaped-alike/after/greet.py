def greet(name):
    print("hello", name)
    print("bye")
    return "ok"
