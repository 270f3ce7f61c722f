"""The schema comparison on the constructs real tool schemas use: $ref (and recursive ones),
allOf, oneOf, OpenAPI's nullable, boolean schemas, tuples, additionalProperties schemas."""

from __future__ import annotations

from typing import Any

import pytest

from toolnexus_gen.breaking.schema import compare


def said(old: Any, new: Any) -> list[tuple[str, str, bool, bool, str]]:
    return [(c.kind, c.path, c.narrows, c.widens, c.detail) for c in compare(old, new)]


def test_a_recursive_schema_ends() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
    }
    narrower = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 9},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
    }
    assert said(tree, tree) == []
    assert said(tree, narrower) == [
        ("bound", "name", True, False, "maxLength 9 added"),
    ]


def test_all_of_is_merged_and_ref_siblings_apply() -> None:
    old = {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}, {"required": ["x"]}]}},
        "$defs": {
            "A": {
                "type": "object",
                "properties": {"x": {"type": "string"}, "y": {"type": "string"}},
            }
        },
    }
    new = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "required": ["x", "y"]}},
        "$defs": old["$defs"],
    }
    assert said(old, new) == [
        ("made_required", "a.y", True, False, "optional before, required now")
    ]


def test_one_of_alternatives_are_matched_by_type() -> None:
    old = {"oneOf": [{"type": "string", "maxLength": 5}, {"type": "integer"}]}
    reordered = {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 5}]}
    assert said(old, reordered) == []
    tightened = {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 5}]}
    assert said(old, tightened) == [("bound", "", True, False, "minimum 0 added")]
    assert sorted(said(old, {"type": "string"})) == [
        ("bound", "", False, True, "maxLength 5 removed"),
        ("type", "", True, False, "no longer accepts integer"),
    ]


def test_openapi_nullable_and_type_lists_agree() -> None:
    openapi = {"type": "string", "nullable": True}
    listed = {"type": ["string", "null"]}
    union = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    for a in (openapi, listed, union):
        for b in (openapi, listed, union):
            assert said(a, b) == [], (a, b)
    assert said(openapi, {"type": "string"})[0][:4] == ("type", "", True, False)


@pytest.mark.parametrize(
    ("old", "new", "narrows", "widens"),
    [
        (True, {"type": "string"}, True, False),
        ({"type": "string"}, True, False, True),
        ({}, False, True, False),
        ({"type": "integer"}, {"type": "number"}, False, True),
        ({"type": "number"}, {"type": "integer"}, True, False),
        ({"type": "string"}, {"type": "boolean"}, True, True),
        ({"type": "number", "multipleOf": 2}, {"type": "number", "multipleOf": 4}, True, False),
        ({"type": "number", "multipleOf": 4}, {"type": "number", "multipleOf": 2}, False, True),
        ({"type": "number", "multipleOf": 2}, {"type": "number", "multipleOf": 3}, True, True),
        ({"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^b"}, True, True),
        ({"const": "x"}, {"enum": ["x", "y"]}, False, True),
        (
            {"type": "array", "prefixItems": [{"type": "string"}]},
            {"type": "array", "prefixItems": [{"type": "integer"}]},
            True,
            True,
        ),
    ],
)
def test_direction(old: Any, new: Any, narrows: bool, widens: bool) -> None:
    changes = compare(old, new)
    assert any(c.narrows for c in changes) is narrows, changes
    assert any(c.widens for c in changes) is widens, changes


def test_additional_properties_schemas_are_compared() -> None:
    old = {"type": "object", "additionalProperties": {"type": "string"}}
    new = {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}
    assert said(old, new) == [("bound", "*", True, False, "maxLength 3 added")]
    assert said({"type": "object"}, old) == [
        ("bound", "*", True, False, "properties it does not list must match a schema now")
    ]


def test_no_arguments_and_descriptions() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string", "description": "A"}}}
    new = {"type": "object", "properties": {"a": {"type": "string", "description": "The A"}}}
    assert said(old, new) == [
        ("description", "a", False, False, 'description of \'a\' changed from "A" to "The A"')
    ]
