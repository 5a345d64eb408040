    pass
