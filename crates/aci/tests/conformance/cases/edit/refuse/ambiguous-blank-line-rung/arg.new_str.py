    "retries": 5,
}
