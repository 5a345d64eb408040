def greet(name):
    print("hello", name)
    log(name)
    return "ok"
