package main

import "fmt"

func greet(name string) {
	fmt.Printf("hello %s\n", name)
	fmt.Println("goodbye")
}
