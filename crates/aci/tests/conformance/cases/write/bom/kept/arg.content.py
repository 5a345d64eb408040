GREETING = "hallo"
