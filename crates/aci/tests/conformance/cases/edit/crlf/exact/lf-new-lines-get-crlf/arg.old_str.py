    port = env.get("DB_PORT", "5432")
