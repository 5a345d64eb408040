    for i := 0; i < 5; i++ {
        if i%2 == 0 {
            fmt.Println("tick", i)
        }
    }
