package server

import (
	"encoding/json"
	"errors"
	"net/http"
)

// User is the public view of an account.
type User struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

var ErrNotFound = errors.New("user not found")

var ErrInvalid = errors.New("invalid user")

type Store interface {
	Get(id int) (*User, error)
	Put(u *User) error
}

// GetUser writes the user with the given id as JSON.
func GetUser(s Store, w http.ResponseWriter, id int) {
	u, err := s.Get(id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(u); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

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
