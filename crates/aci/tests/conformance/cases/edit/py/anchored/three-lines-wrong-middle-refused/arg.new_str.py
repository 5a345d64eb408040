def total_quantity(items):
    total = 0
    for item in list(items):
