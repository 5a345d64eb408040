def total(items):
    count = 0
    for item in items:
        count += item	# the sum
    return count
