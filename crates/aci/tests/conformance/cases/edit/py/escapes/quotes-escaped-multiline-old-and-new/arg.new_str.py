    print(\"hi\", name)
    return \"ok\"
