     7	    return data
       
       
     8	def save(path, data):
