func StoreUser(ctx context.Context, s Store, u *User) error {
