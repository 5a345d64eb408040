    return this;
