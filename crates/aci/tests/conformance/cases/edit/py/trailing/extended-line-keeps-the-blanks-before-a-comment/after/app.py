def total(items):
    count = 0  # running sum
    for item in items:
        count += item
    return count
