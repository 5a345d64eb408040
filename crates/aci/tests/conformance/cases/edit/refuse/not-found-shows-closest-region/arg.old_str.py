    for arg in argv:
        if arg == "--verbose":
            opts["verbose"] = True
