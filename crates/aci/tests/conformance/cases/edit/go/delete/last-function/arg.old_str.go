
// SaveUser stores u after checking it.
func SaveUser(s Store, u *User) error {
	if u.Name == "" {
		return errors.New("name is required")
	}
	if u.Email == "" {
		return errors.New("email is required")
	}
	return s.Put(u)
}
