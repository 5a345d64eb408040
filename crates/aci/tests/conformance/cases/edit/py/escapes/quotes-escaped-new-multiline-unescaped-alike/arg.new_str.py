    print(\"hello\", name)
    print(\"bye\")