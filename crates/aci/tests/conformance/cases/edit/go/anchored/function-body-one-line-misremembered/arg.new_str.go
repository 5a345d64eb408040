func SaveUser(s Store, u *User) error {
	if u.Name == "" || u.Email == "" {
		return errors.New("name and email are required")
	}
	return s.Put(u)
