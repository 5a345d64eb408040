PRIMARY = {
    "host": "db1.internal",
    "retries": 3,
}

REPLICA = {
    "host": "db2.internal",
    "retries": 3,
}
