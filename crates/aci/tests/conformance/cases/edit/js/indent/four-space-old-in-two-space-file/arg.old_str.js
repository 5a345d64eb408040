    add(item, qty = 1) {
        const existing = this.items.find((i) => i.id === item.id);
        if (existing) {
            existing.qty += qty;
