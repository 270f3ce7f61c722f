"""The conversation every provider script runs, and the model turns played when no API key is set.

A turn is a list of tool calls `(call_id, name, arguments)` or the final text (see ../scripted.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # shop_tools and handlers; ../scripted.py

PROMPT = "Find me a green tea under 20 EUR, put two in the cart and order them to Asha, 4 Lake Rd, Chennai, IN. Pay by card."
TURNS: list[Any] = [
    [
        (
            "call_1",
            "search_products",
            {"query": "green tea", "max_price": {"amount": 20, "currency": "EUR"}},
        )
    ],
    [
        ("call_2", "get_product", {"sku": "TEA-042"}),
        ("call_3", "add_to_cart", {"items": [{"sku": "TEA-042", "quantity": 2}]}),
    ],
    [
        (
            "call_4",
            "checkout",
            {
                "ship_to": {
                    "name": "Asha",
                    "street": "4 Lake Rd",
                    "city": "Chennai",
                    "country": "IN",
                },
                "payment": "card",
                "gift_note": None,
            },
        )
    ],
    "Done: two Darjeeling green teas (EUR 25.00) are ordered to Asha in Chennai as ORD-1001, paid by card.",
]


def report(provider: str, run: object) -> None:
    calls = ", ".join(
        f"{call.name}{'!' if result.is_error else ''}"
        for call, result in run.tool_calls  # type: ignore[attr-defined]
    )
    print(f"{provider:17}{run.turns} turns; calls: {calls}")  # type: ignore[attr-defined]
