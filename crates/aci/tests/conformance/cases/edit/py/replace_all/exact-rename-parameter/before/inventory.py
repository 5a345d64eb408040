"""Inventory helpers for the warehouse service."""

import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    tags: list = field(default_factory=list)

    def restock(self, amount):
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.quantity += amount
        log.info("restocked %s by %d", self.sku, amount)
        return self.quantity

    def take(self, amount):
        if amount > self.quantity:
            raise ValueError("not enough stock")
        self.quantity -= amount
        return self.quantity


def total_quantity(items):
    total = 0
    for item in items:
        total += item.quantity
    return total


def find_by_tag(items, tag):
    return [item for item in items if tag in item.tags]
