Put(u *User) error
	Delete(id int) error