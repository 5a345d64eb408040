    41|func SaveUser(s Store, u *User) error {
    42|	if u.Name == "" {
