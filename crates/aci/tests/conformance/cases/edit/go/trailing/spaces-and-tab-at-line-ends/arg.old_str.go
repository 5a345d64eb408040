	u, err := s.Get(id)  
	if err != nil {	
