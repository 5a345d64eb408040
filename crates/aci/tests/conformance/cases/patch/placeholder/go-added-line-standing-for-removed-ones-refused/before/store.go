package store

func (s *Store) Get(id string) (*Item, error) {
	item, ok := s.items[id]
	if !ok {
		return nil, ErrNotFound
	}
	return item, nil
}
