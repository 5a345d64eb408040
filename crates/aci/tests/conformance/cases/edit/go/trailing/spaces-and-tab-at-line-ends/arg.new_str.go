	u, err := s.Get(id)
	if err != nil || u == nil {
