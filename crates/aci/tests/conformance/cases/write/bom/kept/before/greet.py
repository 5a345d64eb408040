GREETING = "héllo"
