     4	def load(path):
     9	    with open(path) as f:
