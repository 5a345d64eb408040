ALLOWED_HOSTS = ["localhost", "127.0.0.1"]


def database_url(env):
