def handler(event):
    # ...
    return event


def other():
    pass
