  remove(id) {
    this.items = this.items.filter((i) => String(i.id) !== String(id));

    return this;
  }
