func StoreUser(s Store, u *User) error {
