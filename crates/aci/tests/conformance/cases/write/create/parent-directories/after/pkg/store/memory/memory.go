package memory

// Store keeps records in a map.
type Store struct {
	records map[string][]byte
}
