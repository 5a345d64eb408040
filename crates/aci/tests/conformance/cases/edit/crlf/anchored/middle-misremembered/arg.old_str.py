def database_url(env):
    host = env.get("HOST", "localhost")
    port = env.get("DB_PORT", "5432")
    name = env.get("DB_NAME", "app")
    return f"postgres://{host}:{port}/{name}"
