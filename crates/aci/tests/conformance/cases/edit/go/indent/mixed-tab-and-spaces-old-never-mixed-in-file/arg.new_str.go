	if u.Name == "" {
        return errors.New("name must not be empty")
	}
