"""Reach and free-form objects: strict mode closes every object, so an object that takes
properties it does not name (its keys or count constrained: `propertyNames`, `minProperties`,
`unevaluatedProperties`, ...) makes the tool non-strict for every strict target (TN223), at the
root too; it is never closed into an object that takes no properties. A closed object without
properties (a tool without arguments) goes out with `properties: {}` written, as OpenAI's strict
mode demands ("object schema missing properties")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, write_specs

STRICT_TARGETS = ("openai", "openai_responses", "anthropic")

FREE_FORM = {
    "root_property_names": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
    "root_min_properties": {"type": "object", "minProperties": 1},
    "root_unevaluated": {"type": "object", "unevaluatedProperties": {"type": "string"}},
    "nested_property_names": {
        "type": "object",
        "properties": {"schema": {"type": "object", "propertyNames": {"type": "string"}}},
        "required": ["schema"],
    },
    "nested_unevaluated": {
        "type": "object",
        "properties": {
            "labels": {
                "type": "object",
                "properties": {"team": {"type": "string"}},
                "unevaluatedProperties": True,
            }
        },
    },
}


def _build(tmp_path: Path, specs: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], str]:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nprofile = "reach"\ntargets = ["openai", "openai_responses", '
        '"anthropic"]\n'
    )
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "tools", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    entries: dict[str, dict[str, Any]] = {}
    for target in STRICT_TARGETS:
        for entry in json.loads((tmp_path / f"tools/schemas/{target}.json").read_text()):
            entry = entry.get("function", entry)
            entries[f"{target}/{entry['name']}"] = entry
    return entries, result.stderr


def _objects(schema: Any, pointer: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "object" or (isinstance(kind, list) and "object" in kind):
            found.append((pointer, schema))
        for key, value in schema.items():
            found += _objects(value, f"{pointer}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += _objects(value, f"{pointer}/{i}")
    return found


def _schema(entry: dict[str, Any]) -> Any:
    return entry.get("parameters", entry.get("input_schema"))


@pytest.mark.parametrize("name", sorted(FREE_FORM))
def test_a_free_form_object_makes_the_tool_non_strict_everywhere(tmp_path: Path, name: str) -> None:
    spec = {"description": "Takes a free-form object", "input_schema": FREE_FORM[name]}
    entries, stderr = _build(tmp_path, {f"{name}.json": spec})
    for target in STRICT_TARGETS:
        entry = entries[f"{target}/{name}"]
        assert entry["strict"] is False, (target, entry)
        assert f"warning[TN223]: {target}: sent non-strict (strictify)" in stderr
        # what the spec allows is kept: no object of it is closed
        objects = _objects(_schema(entry))
        assert objects and all(node.get("additionalProperties") is not False for _, node in objects)


def test_every_object_of_a_strict_entry_names_its_properties(tmp_path: Path) -> None:
    specs = {
        "no_arguments.json": {"description": "Nothing", "input_schema": {"type": "object"}},
        "closed.json": {
            "description": "An empty closed object",
            "input_schema": {"type": "object", "additionalProperties": False},
        },
        "nested_closed.json": {
            "description": "A property that takes only {}",
            "input_schema": {
                "type": "object",
                "properties": {"options": {"type": "object", "additionalProperties": False}},
            },
        },
    }
    entries, _ = _build(tmp_path, specs)
    for key, entry in entries.items():
        assert entry["strict"] is True, key
        for pointer, node in _objects(_schema(entry)):
            assert "properties" in node and node.get("additionalProperties") is False, (
                key,
                pointer,
                node,
            )
