    print(\"hello\", name)
    return \"ok\"
