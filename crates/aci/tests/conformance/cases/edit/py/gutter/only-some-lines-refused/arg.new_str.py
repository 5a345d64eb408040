def total_quantity(items):
    total = 0.0
