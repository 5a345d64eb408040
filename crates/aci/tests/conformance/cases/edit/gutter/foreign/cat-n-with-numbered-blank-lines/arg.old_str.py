     7	    return data
     8	
     9	
    10	def save(path, data):
