    30|def total_quantity(items):
    31|    total = 0
    32|    for item in items:
