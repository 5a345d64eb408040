total(rate = TAX_RATE) {
  const subtotal = this.subtotal();
  return subtotal + subtotal * rate;
}
