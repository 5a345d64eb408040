if x:
    a = 1
    b = 2
    c = 3
end = 0
