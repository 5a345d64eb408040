def total_quantity(items, skip_empty=False):
    total = 0
    for item in items:
