var ErrNotFound = errors.New("user not found")

var ErrInvalid = errors.New("invalid user")

type Store interface {
