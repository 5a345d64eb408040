    port = env.get("DB_PORT", "5432")
    user = env.get("DB_USER", "app")
    password = env.get("DB_PASSWORD", "")
