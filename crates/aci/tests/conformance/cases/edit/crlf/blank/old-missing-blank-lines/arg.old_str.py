ALLOWED_HOSTS = ["localhost"]
def database_url(env):
