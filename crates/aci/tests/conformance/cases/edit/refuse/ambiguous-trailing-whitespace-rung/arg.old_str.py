    "retries": 3,  
