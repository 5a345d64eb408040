host = env.get("DB_HOST", "localhost")
port = env.get("DB_PORT", "5432")
