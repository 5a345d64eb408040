NAME = "demo-app"
VERSION = 2
