"""Inventory bookkeeping for the warehouse service."""

from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    price_cents: int = 0
    tags: list = field(default_factory=list)


class Inventory:
    def __init__(self):
        self.items = {}
        self.log = []

    def add(self, item):
        if item.sku in self.items:
            raise KeyError(f"duplicate sku {item.sku}")
        self.items[item.sku] = item
        self.log.append(("add", item.sku))

    def remove(self, sku):
        item = self.items.pop(sku)
        self.log.append(("remove", sku))
        return item

    def restock(self, sku, amount):
        if amount <= 0:
            raise ValueError("amount must be positive")
        item = self.items[sku]
        item.quantity += int(amount)
        self.log.append(("restock", sku))
        return item.quantity

    def sell(self, sku, amount):
        item = self.items[sku]
        if item.quantity < amount:
            raise ValueError("not enough stock")
        item.quantity -= amount
        self.log.append(("sell", sku))
        return item.quantity

    def total_value(self):
        total = 0
        for item in self.items.values():
            total += item.quantity * item.price_cents
        return total

    def low_stock(self, threshold=5):
        result = []
        for item in self.items.values():
            if item.quantity < threshold:
                result.append(item.sku)
        return sorted(result)

    def tagged(self, tag):
        result = []
        for item in self.items.values():
            if tag in item.tags:
                result.append(item.sku)
        return sorted(result)


def summary(inventory):
    lines = []
    for sku, item in sorted(inventory.items.items()):
        lines.append(f"{sku}: {item.quantity} x {item.price_cents}")
    return "\n".join(lines)
