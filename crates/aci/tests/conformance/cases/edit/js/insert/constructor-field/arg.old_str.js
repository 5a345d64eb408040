    this.owner = owner;
    this.items = [];
