host = env.get("DB_HOST", "localhost")
port = int(env.get("DB_PORT", "5432"))
