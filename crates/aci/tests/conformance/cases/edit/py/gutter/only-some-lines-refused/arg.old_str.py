    30|def total_quantity(items):
    total = 0
