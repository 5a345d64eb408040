if x:
    a = 1
    b = 22
    c = 3
end = 0
