    for item in items: 
        count += item	# the sum