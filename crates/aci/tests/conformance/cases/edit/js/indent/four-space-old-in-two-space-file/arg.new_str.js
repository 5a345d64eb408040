    add(item, qty = 1) {
        if (qty <= 0) {
            throw new RangeError('qty must be positive');
        }
        const existing = this.items.find((i) => i.id === item.id);
        if (existing) {
            existing.qty += qty;
