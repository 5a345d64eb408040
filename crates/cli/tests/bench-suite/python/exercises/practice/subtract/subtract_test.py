from subtract import subtract


def test_subtract():
    assert subtract(5, 3) == 2
