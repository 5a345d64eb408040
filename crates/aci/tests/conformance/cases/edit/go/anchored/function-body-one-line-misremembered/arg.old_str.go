func SaveUser(s Store, u *User) error {
	if u.Name == "" {
		return errors.New("missing name")
	}
	if u.Email == "" {
		return errors.New("email is required")
	}
	return s.Put(u)
