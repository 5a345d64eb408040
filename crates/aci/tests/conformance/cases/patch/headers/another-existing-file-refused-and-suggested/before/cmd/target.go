package main

func Port() int {
	return 8080
}
