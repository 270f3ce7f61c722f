"""The synthetic tool every build benchmark generates by the thousand (bench/run.py, bench/many.py)."""

from __future__ import annotations

from typing import Any


def synthetic_spec(i: int) -> dict[str, Any]:
    """A realistic tool, clean for every target: nested object, enums, an array of objects through
    a local $ref, bounds, defaults, a date-time, descriptions."""
    return {
        "description": f"Synthetic tool number {i}: searches records and returns a page of results",
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Free text", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
                "order": {"type": "string", "enum": ["asc", "desc"], "default": "asc"},
                "filters": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Filter"},
                    "description": "All must match",
                },
                "window": {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string", "format": "date-time"},
                        "end": {"type": "string", "format": "date-time"},
                    },
                    "required": ["start"],
                },
                f"field_{i % 7}": {
                    "type": "boolean",
                    "description": f"Variant {i % 7} of tool {i}",
                },
            },
            "required": ["query"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string"},
                        "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt"]},
                        "value": {"type": "string"},
                    },
                    "required": ["field", "op", "value"],
                }
            },
        },
        "examples": [{"query": f"records {i}", "limit": 5}],
    }
