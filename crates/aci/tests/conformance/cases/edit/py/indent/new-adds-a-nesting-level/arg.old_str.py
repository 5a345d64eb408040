total = 0
for item in items:
    total += item.quantity
return total