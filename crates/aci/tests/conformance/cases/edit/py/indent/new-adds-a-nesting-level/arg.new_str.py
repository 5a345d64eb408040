total = 0
for item in items:
    if item.quantity > 0:
        total += item.quantity
return total