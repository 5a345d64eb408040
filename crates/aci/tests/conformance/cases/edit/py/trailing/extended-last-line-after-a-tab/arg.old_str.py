    for item in items: 
        count += item	