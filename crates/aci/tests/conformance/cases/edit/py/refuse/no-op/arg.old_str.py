    return total
