

def cache_url(env):
    return env.get("CACHE_URL", "redis://localhost:6379/0")
