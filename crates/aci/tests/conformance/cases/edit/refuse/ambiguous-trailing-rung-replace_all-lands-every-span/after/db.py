PRIMARY = {
    "host": "db1.internal",
    "retries": 5,
}

REPLICA = {
    "host": "db2.internal",
    "retries": 5,
}
