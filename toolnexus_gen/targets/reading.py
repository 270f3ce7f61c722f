"""What every target's import reader shares: the result type, the usual wrappers around a tool
list, and how one tool becomes one spec (`toolnexus-gen import`, commands/importer.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolnexus_gen.toolspec.codegen_keywords import strip_spec

SAFE_STEM = re.compile(r"[A-Za-z0-9_.:-]+")


class ImportError_(Exception):
    """The file cannot be imported: a message naming the file and the tool at fault."""


@dataclass
class Imported:
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> spec data
    notes: list[str] = field(default_factory=list)  # what was not imported, and hints
    options: dict[str, str] = field(default_factory=dict)  # target options the file implies


def tool_list(data: Any, *keys: str) -> list[Any]:
    """The list of tools inside the usual wrappers."""
    if isinstance(data, dict) and "result" in data and "jsonrpc" in data:
        data = data["result"]
    for key in keys:
        if isinstance(data, dict) and key in data:
            data = data[key]
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise ImportError_("expected a list of tools (or an object with a 'tools' list)")
    return data


def require(entry: Any, where: str, *keys: str) -> None:
    if not isinstance(entry, dict):
        raise ImportError_(f"{where}: expected an object, not {type(entry).__name__}")
    for key in keys:
        if key not in entry:
            raise ImportError_(f"{where}: missing {key!r}")


def add_spec(
    out: Imported,
    where: str,
    name: Any,
    description: Any,
    input_schema: Any,
    extra: dict[str, Any],
    leftovers: dict[str, Any],
    *,
    title: Any = None,
) -> None:
    if not isinstance(name, str) or not SAFE_STEM.fullmatch(name):
        raise ImportError_(f"{where}: tool name {name!r} cannot be a spec file name")
    if name in out.specs:
        raise ImportError_(f"{where}: tool {name!r} appears twice")
    if not isinstance(description, str) or not description.strip():
        description = title if isinstance(title, str) and title.strip() else name
        out.notes.append(f"{name}: no description; used {description!r} (specs need one)")
    spec: dict[str, Any] = {"name": name}
    if title is not None:
        spec["title"] = title
    spec["description"] = description
    if input_schema is not None:
        spec["input_schema"] = input_schema
    spec.update(extra)
    out.notes += strip_spec(spec, "tool")  # a provider file's schemas are data, as a server's
    for key in sorted(leftovers):
        out.notes.append(f"{name}: {key!r} is not imported (a spec has no place for it)")
    out.specs[name] = spec


def leftovers(entry: dict[str, Any], known: set[str]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in known}


def lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI upper-case types as JSON Schema's lower-case ones."""
    if isinstance(schema, list):
        return [lower_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key in ("properties", "$defs", "defs") and isinstance(value, dict):
            out[key] = {name: lower_types(child) for name, child in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = lower_types(value)
        else:
            out[key] = value
    return out
