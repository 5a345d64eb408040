def find_by_tag(items, tag):
    return [item for item in items if tag in item.tags]
