    host = env.get("DB_HOST", "127.0.0.1")  
    port = env.get("DB_PORT", "5432") 
