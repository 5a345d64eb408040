    34|    return total
    35|
    36|
    37|def find_by_tag(items, tag, exact=True):
