}

function emptyCart(owner) {
  return new Cart(owner);
}

module.exports = { Cart, TAX_RATE, emptyCart };
