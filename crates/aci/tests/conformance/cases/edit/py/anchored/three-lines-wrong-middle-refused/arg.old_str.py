def total_quantity(items):
    total = 0.0
    for item in items:
