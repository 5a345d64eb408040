def area(w, h):
    return abs(w * h)


def perimeter(w, h):
    return 2 * (w + h)