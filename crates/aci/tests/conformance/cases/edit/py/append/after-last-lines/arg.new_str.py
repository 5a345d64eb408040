def find_by_tag(items, tag):
    return [item for item in items if tag in item.tags]


def low_stock(items, threshold=5):
    return [item for item in items if item.quantity < threshold]
