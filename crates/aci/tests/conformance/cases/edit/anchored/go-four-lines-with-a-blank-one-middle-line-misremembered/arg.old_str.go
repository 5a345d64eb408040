func (c *Cache) Get(key string) (string, bool) {
	c.mu.lock()

	v, ok := c.items[key]
	c.mu.Unlock()
