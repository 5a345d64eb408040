NAME = "demo"
VERSION = 1
