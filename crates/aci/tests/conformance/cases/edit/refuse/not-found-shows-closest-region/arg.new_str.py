    for arg in argv:
        if arg == "--verbose" or arg == "-v":
            opts["verbose"] = True
