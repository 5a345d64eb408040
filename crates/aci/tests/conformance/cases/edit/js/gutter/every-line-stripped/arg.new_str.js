  subtotal() {
    return this.items.reduce((sum, i) => sum + i.price * (i.qty ?? 1), 0);
