  subtotal() {   
    return Math.round(this.items.reduce((sum, i) => sum + i.price * i.qty, 0) * 100) / 100;  
