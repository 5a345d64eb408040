    # TODO
