"""What the command line and the configuration need to know about the targets, without importing
them (so `--version`, option errors and the no-op fast path stay instant)."""

from __future__ import annotations

GEMINI_TRANSFORMS = ("const_to_enum", "nullable", "strip_meta", "inline_refs")
JSON_SCHEMA_TRANSFORMS = ("strip_meta", "inline_refs")

# Each target's options and their allowed values, in registry order.
OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "gemini": {
        "schema_field": ("parameters", "parametersJsonSchema"),
        "transforms": GEMINI_TRANSFORMS,
    },
    "openai": {"transforms": JSON_SCHEMA_TRANSFORMS},
    "openai_responses": {"transforms": JSON_SCHEMA_TRANSFORMS},
    "anthropic": {"transforms": JSON_SCHEMA_TRANSFORMS},
    "mcp": {"transforms": JSON_SCHEMA_TRANSFORMS},
    "bedrock": {"transforms": JSON_SCHEMA_TRANSFORMS},
}
NAMES: tuple[str, ...] = tuple(OPTIONS)
