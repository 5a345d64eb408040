     2|DEBUG = False
     3|ALLOWED_HOSTS = ["localhost"]
