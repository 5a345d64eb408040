package server

func Port() int {
	return 9090
}
