    count = 0  # running sum
    for item in items:  
