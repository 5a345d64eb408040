package server

func Port() int {
	return 8080
}
