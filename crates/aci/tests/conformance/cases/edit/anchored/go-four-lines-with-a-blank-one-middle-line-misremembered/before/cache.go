package cache

import "sync"

type Cache struct {
	mu    sync.Mutex
	items map[string]string
}

func (c *Cache) Get(key string) (string, bool) {
	c.mu.Lock()

	v, ok := c.items[key]
	c.mu.Unlock()
	return v, ok
}
