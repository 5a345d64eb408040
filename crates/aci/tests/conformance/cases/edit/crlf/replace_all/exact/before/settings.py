# Application settings
DEBUG = False
ALLOWED_HOSTS = ["localhost"]


def database_url(env):
    host = env.get("DB_HOST", "localhost")
    port = env.get("DB_PORT", "5432")
    name = env.get("DB_NAME", "app")
    return f"postgres://{host}:{port}/{name}"


def cache_url(env):
    return env.get("CACHE_URL", "redis://localhost:6379/0")
