	remove(id) {
		const before = this.items.length;
		this.items = this.items.filter((i) => i.id !== id);
		return this.items.length !== before;
	}
