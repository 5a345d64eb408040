    count = 0  
    for item in items:  
