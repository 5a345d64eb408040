}

module.exports = { Cart, TAX_RATE };
