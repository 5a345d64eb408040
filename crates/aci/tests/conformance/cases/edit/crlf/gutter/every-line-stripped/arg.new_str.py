DEBUG = False
ALLOWED_HOSTS = ["localhost", "[::1]"]
