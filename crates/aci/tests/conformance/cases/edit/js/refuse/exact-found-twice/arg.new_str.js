    return this.items.length;
