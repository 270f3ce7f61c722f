"""The shop's handlers (started with `toolnexus-gen scaffold handlers.py`, then filled in).

An in-memory catalogue and cart, so the example runs anywhere.
"""

from __future__ import annotations

import itertools
from typing import Any

from shop_tools import (
    AddToCartArgs,
    CheckoutArgs,
    GetProductArgs,
    OrderStatusArgs,
    SearchProductsArgs,
    ToolContext,
    ToolHandlers,
    ToolOutput,
)

CATALOGUE: dict[str, dict[str, Any]] = {
    "TEA-042": {
        "name": "Darjeeling green tea",
        "category": "tea",
        "price": 12.5,
        "stock": 40,
    },
    "TEA-077": {
        "name": "Assam breakfast tea",
        "category": "tea",
        "price": 9.0,
        "stock": 0,
    },
    "COF-001": {
        "name": "Single-origin coffee beans",
        "category": "coffee",
        "price": 18.0,
        "stock": 12,
    },
    "EQP-300": {
        "name": "Burr grinder",
        "category": "equipment",
        "price": 79.0,
        "stock": 3,
    },
}


class ShopTools(ToolHandlers):
    def __init__(self) -> None:
        self.cart: dict[str, int] = {}
        self.orders: dict[str, str] = {}
        self._numbers = itertools.count(1001)

    def search_products(self, args: SearchProductsArgs, ctx: ToolContext) -> ToolOutput:
        words = args.query.lower().split()
        hits = [
            {"sku": sku, "name": p["name"], "price": p["price"]}
            for sku, p in CATALOGUE.items()
            if any(word in p["name"].lower() for word in words)
            and (args.category is None or p["category"] == args.category.value)
            and (args.max_price is None or p["price"] <= args.max_price.amount)
        ]
        return hits[: args.limit]

    def get_product(self, args: GetProductArgs, ctx: ToolContext) -> ToolOutput:
        product = CATALOGUE.get(args.sku)
        if product is None:
            raise KeyError(f"no product {args.sku}; search_products lists the SKUs")
        return {
            "sku": args.sku,
            "name": product["name"],
            "price": {"amount": product["price"], "currency": "EUR"},
            "in_stock": product["stock"],
        }

    async def add_to_cart(self, args: AddToCartArgs, ctx: ToolContext) -> ToolOutput:
        for item in args.items:
            if item.sku not in CATALOGUE:
                raise KeyError(f"no product {item.sku}")
            self.cart[item.sku] = self.cart.get(item.sku, 0) + item.quantity
        total = sum(CATALOGUE[sku]["price"] * n for sku, n in self.cart.items())
        return f"Cart: {sum(self.cart.values())} items, total EUR {total:.2f}"

    async def checkout(self, args: CheckoutArgs, ctx: ToolContext) -> ToolOutput:
        if not self.cart:
            return "The cart is empty: add_to_cart first."
        order_id = f"ORD-{next(self._numbers)}"
        self.orders[order_id] = "placed"
        self.cart.clear()
        note = f" with the note {args.gift_note!r}" if args.gift_note else ""
        return (
            f"Order {order_id} placed for {args.ship_to.name}, paid by {args.payment.value}{note}."
        )

    def order_status(self, args: OrderStatusArgs, ctx: ToolContext) -> ToolOutput:
        return self.orders.get(args.order_id, "unknown order")
