// Package store keeps values in memory with an expiry time.
package store

import (
	"errors"
	"sync"
	"time"
)

// Kind tells how a value was stored.
type Kind int

const (
	KindString Kind = iota
	KindNumber
	KindList
)

// DefaultTTL is used when a value is stored without a TTL.
const DefaultTTL = 5 * time.Minute

// ErrMissing is returned by Get for a key that is not there.
var ErrMissing = errors.New("store: missing key")

// Clock tells the current time; tests replace it.
type Clock = func() time.Time

// Entry is one stored value.
type Entry struct {
	Value   string
	Kind    Kind
	Expires time.Time
}

// Backend is what a Store persists to.
type Backend interface {
	Load() (map[string]Entry, error)
	Save(entries map[string]Entry) error
}

// Store is a map of entries guarded by a mutex.
type Store struct {
	mu      sync.Mutex
	entries map[string]Entry
	now     Clock
}

// New makes an empty Store.
func New(now Clock) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{entries: map[string]Entry{}, now: now}
}

// Put stores a value with a TTL; a zero ttl means DefaultTTL.
func (s *Store) Put(key, value string, kind Kind, ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ttl == 0 {
		ttl = DefaultTTL
	}
	s.entries[key] = Entry{Value: value, Kind: kind, Expires: s.now().Add(ttl)}
}

// Get returns a live entry.
func (s *Store) Get(key string) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok || s.now().After(e.Expires) {
		return Entry{}, ErrMissing
	}
	return e, nil
}

// Cache is a typed view over a Store.
type Cache[K comparable, V any] struct {
	items map[K]V
}

// Get returns the cached value for key.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	v, ok := c.items[key]
	return v, ok
}
