func SaveUser(s Store, u *User) error {
	if u == nil {
		return errors.New("nil user")
	}
	if u.Name == "" {
