'use strict';

const TAX_RATE = 0.08;

class Cart {
  constructor(owner) {
    this.owner = owner;
    this.items = [];
    this.createdAt = new Date();
  }

  add(item, qty = 1) {
    const existing = this.items.find((i) => i.id === item.id);
    if (existing) {
      existing.qty += qty;
    } else {
      this.items.push({ ...item, qty });
    }
    return this;
  }

  remove(id) {
    this.items = this.items.filter((i) => i.id !== id);
    return this;
  }

  subtotal() {
    return this.items.reduce((sum, i) => sum + i.price * i.qty, 0);
  }

  total() {
    const subtotal = this.subtotal();
    return subtotal + subtotal * TAX_RATE;
  }
}

module.exports = { Cart, TAX_RATE };
