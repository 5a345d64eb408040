  subtotal() {
    27|    return this.items.reduce((sum, i) => sum + i.price * i.qty, 0);
