     4	def load(path):
    with open(path) as f:
