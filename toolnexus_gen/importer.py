"""`toolnexus-gen import FORMAT FILE`: existing provider tool JSON becomes one spec per tool.

Building the imported specs for the same target gives the provider file back, with these
normalisations (documented in the README):
- a wrapper around the tool list (`{"tools": [...]}`, a JSON-RPC `tools/list` result, Bedrock's
  `toolConfig`, a Gemini request body) is dropped: the build writes the bare list the target
  always writes;
- tools come out in name order;
- Gemini's upper-case OpenAPI types (`"OBJECT"`) become JSON Schema's lower-case ones;
- a tool without a description gets its title or name as description (specs need one);
- keys a spec cannot hold are reported as not imported (for example Anthropic `cache_control`,
  MCP `icons` and `_meta`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .paths import SPEC_SUFFIXES

SAFE_STEM = re.compile(r"[A-Za-z0-9_.:-]+")


class ImportError_(Exception):
    """The file cannot be imported: a message naming the file and the tool at fault."""


@dataclass
class Imported:
    specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool name -> spec data
    notes: list[str] = field(default_factory=list)  # what was not imported, and hints
    options: dict[str, str] = field(default_factory=dict)  # target options the file implies


def _tool_list(data: Any, *keys: str) -> list[Any]:
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


def _require(entry: Any, where: str, *keys: str) -> None:
    if not isinstance(entry, dict):
        raise ImportError_(f"{where}: expected an object, not {type(entry).__name__}")
    for key in keys:
        if key not in entry:
            raise ImportError_(f"{where}: missing {key!r}")


def _spec(
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
    for key in sorted(leftovers):
        out.notes.append(f"{name}: {key!r} is not imported (a spec has no place for it)")
    out.specs[name] = spec


def _leftovers(entry: dict[str, Any], known: set[str]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in known}


def _openai(data: Any, out: Imported) -> None:
    for i, entry in enumerate(_tool_list(data)):
        where = f"tools[{i}]"
        _require(entry, where, "function")
        function = entry["function"]
        _require(function, f"{where}.function", "name")
        extra = {"strict": function["strict"]} if isinstance(function.get("strict"), bool) else {}
        known = {"name", "description", "parameters", "strict"}
        _spec(
            out,
            where,
            function["name"],
            function.get("description"),
            function.get("parameters"),
            extra,
            _leftovers(function, known),
        )


def _openai_responses(data: Any, out: Imported) -> None:
    for i, entry in enumerate(_tool_list(data)):
        where = f"tools[{i}]"
        _require(entry, where, "name")
        if entry.get("type", "function") != "function":
            out.notes.append(f"{where}: a {entry.get('type')!r} tool is not a function; skipped")
            continue
        # strict: false is what the build writes when a spec says nothing, so leave it unsaid.
        extra = {"strict": True} if entry.get("strict") is True else {}
        known = {"type", "name", "description", "parameters", "strict"}
        _spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry.get("parameters"),
            extra,
            _leftovers(entry, known),
        )


def _anthropic(data: Any, out: Imported) -> None:
    for i, entry in enumerate(_tool_list(data)):
        where = f"tools[{i}]"
        _require(entry, where, "name", "input_schema")
        extra: dict[str, Any] = {}
        if isinstance(entry.get("input_examples"), list):
            extra["examples"] = entry["input_examples"]
        if isinstance(entry.get("strict"), bool):
            extra["strict"] = entry["strict"]
        known = {"name", "description", "input_schema", "input_examples", "strict", "type"}
        _spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry["input_schema"],
            extra,
            _leftovers(entry, known),
        )


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI upper-case types as JSON Schema's lower-case ones."""
    if isinstance(schema, list):
        return [_lower_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key in ("properties", "$defs", "defs") and isinstance(value, dict):
            out[key] = {name: _lower_types(child) for name, child in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _lower_types(value)
        else:
            out[key] = value
    return out


def _gemini(data: Any, out: Imported) -> None:
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ImportError_('expected [{"functionDeclarations": [...]}]')
    declarations: list[Any] = []
    for i, wrapper in enumerate(data):
        if isinstance(wrapper, dict) and (
            "functionDeclarations" in wrapper or "function_declarations" in wrapper
        ):
            declarations += (
                wrapper.get("functionDeclarations") or wrapper.get("function_declarations") or []
            )
        elif isinstance(wrapper, dict) and "name" in wrapper:
            declarations.append(wrapper)  # a bare list of declarations
        else:
            out.notes.append(f"tools[{i}]: not a functionDeclarations wrapper; skipped")
    json_schema = False
    for i, entry in enumerate(declarations):
        where = f"functionDeclarations[{i}]"
        _require(entry, where, "name")
        schema = entry.get("parametersJsonSchema", entry.get("parameters_json_schema"))
        if schema is not None:
            json_schema = True
        else:
            schema = entry.get("parameters")
            if schema is not None:
                schema = _lower_types(schema)
        extra: dict[str, Any] = {}
        output = entry.get("responseJsonSchema", entry.get("response"))
        if output is not None:
            extra["output_schema"] = _lower_types(output)
        known = {
            "name",
            "description",
            "parameters",
            "parametersJsonSchema",
            "parameters_json_schema",
            "response",
            "responseJsonSchema",
        }
        _spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            schema,
            extra,
            _leftovers(entry, known),
        )
    if json_schema:
        out.options["gemini.schema_field"] = "parametersJsonSchema"


def _mcp(data: Any, out: Imported) -> None:
    for i, entry in enumerate(_tool_list(data)):
        where = f"tools[{i}]"
        _require(entry, where, "name", "inputSchema")
        extra: dict[str, Any] = {}
        if isinstance(entry.get("outputSchema"), dict):
            extra["output_schema"] = entry["outputSchema"]
        if isinstance(entry.get("annotations"), dict):
            extra["annotations"] = entry["annotations"]
        known = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
        _spec(
            out,
            where,
            entry["name"],
            entry.get("description"),
            entry["inputSchema"],
            extra,
            _leftovers(entry, known),
            title=entry.get("title"),
        )


def _bedrock(data: Any, out: Imported) -> None:
    for i, entry in enumerate(_tool_list(data, "toolConfig")):
        where = f"tools[{i}]"
        _require(entry, where, "toolSpec")
        spec = entry["toolSpec"]
        _require(spec, f"{where}.toolSpec", "name")
        schema = (spec.get("inputSchema") or {}).get("json")
        extra = {"strict": spec["strict"]} if isinstance(spec.get("strict"), bool) else {}
        known = {"name", "description", "inputSchema", "strict"}
        _spec(
            out,
            where,
            spec["name"],
            spec.get("description"),
            schema,
            extra,
            _leftovers(spec, known),
        )


READERS = {
    "gemini": _gemini,
    "openai": _openai,
    "openai_responses": _openai_responses,
    "anthropic": _anthropic,
    "mcp": _mcp,
    "bedrock": _bedrock,
}


def read(fmt: str, path: Path) -> Imported:
    """The specs a provider file holds; raises ImportError_ with a located message."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportError_(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ImportError_(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    out = Imported()
    try:
        READERS[fmt](data, out)
    except ImportError_ as exc:
        raise ImportError_(f"{path}: {exc}") from None
    if not out.specs:
        raise ImportError_(f"{path}: no tools found for format {fmt}")
    return out


def spec_text(spec: dict[str, Any], suffix: str) -> str:
    if suffix == ".json":
        return json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    text: str = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=10_000)
    return text


def plan(imported: Imported, specs_dir: Path, suffix: str, force: bool) -> dict[Path, str]:
    """The files to write; raises ImportError_ when one exists (unless force) or clashes."""
    files: dict[Path, str] = {}
    existing = {p.stem: p for p in specs_dir.glob("*") if p.suffix in SPEC_SUFFIXES}
    clashes = []
    for name, spec in sorted(imported.specs.items()):
        path = specs_dir / f"{name}{suffix}"
        other = existing.get(name)
        if other is not None and (other != path or not force):
            clashes.append(other)
        files[path] = spec_text(spec, suffix)
    if clashes:
        listed = ", ".join(p.as_posix() for p in clashes)
        hint = " (pass --force to replace them)" if all(p.suffix == suffix for p in clashes) else ""
        raise ImportError_(f"these specs already exist: {listed}; nothing written{hint}")
    return files
