total() {
  const subtotal = this.subtotal();
  return subtotal + subtotal * TAX_RATE;
}
