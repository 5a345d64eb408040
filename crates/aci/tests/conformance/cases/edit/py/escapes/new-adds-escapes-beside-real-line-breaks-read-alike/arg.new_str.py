    print("hello", name)\n    return "ok"
    x = 1\n    y = 2