HOST = "localhost"
PORT = 8000
WORKERS = 4
TIMEOUT = 30
