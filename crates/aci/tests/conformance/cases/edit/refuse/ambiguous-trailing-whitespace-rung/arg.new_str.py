    "retries": 5,
