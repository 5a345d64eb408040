def handler(event):
    # ...
    return None


def other():
    pass
