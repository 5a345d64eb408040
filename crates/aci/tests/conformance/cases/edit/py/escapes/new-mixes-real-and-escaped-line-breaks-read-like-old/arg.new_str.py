    print("hello", name)
    log(name)\n    return "ok"