  remove(id) {
    this.items = this.items.filter((i) => i.id !== id);

    return this;
  }
