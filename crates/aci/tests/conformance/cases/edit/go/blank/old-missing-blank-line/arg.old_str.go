var ErrNotFound = errors.New("user not found")
type Store interface {
