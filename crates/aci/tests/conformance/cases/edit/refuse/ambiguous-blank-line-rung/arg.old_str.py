    "retries": 3,

}
