    return data or b''


def save(path, data):
