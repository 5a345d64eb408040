    this.owner = owner;
    this.items = [];
    this.createdAt = new Date();
