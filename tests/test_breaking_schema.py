"""The schema comparison on the constructs real tool schemas use: $ref (and recursive ones),
allOf, oneOf, OpenAPI's nullable, boolean schemas, tuples, additionalProperties schemas."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- what is written alike is not walked: the shortcut must never hide a change ---------------


def test_equal_values_of_other_types_are_compared() -> None:
    # 1 == True == 1.0 in Python; a schema tells them apart
    old = {"type": "object", "properties": {"on": {"const": 1}}}
    new = {"type": "object", "properties": {"on": {"const": True}}}
    assert ("type", "on", True, True, "type changed from integer to boolean") in said(old, new)
    assert said(old, {"type": "object", "properties": {"on": {"const": 1}}}) == []


def defs(item: dict[str, Any], ref: str = "#/$defs/Item") -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": ref}}, "x": {"type": "string"}},
        "$defs": {"Item": item},
    }


def test_a_ref_written_alike_whose_target_changed_is_followed() -> None:
    old, new = defs({"type": "string"}), defs({"type": "string", "maxLength": 3})
    assert said(old, new) == [("bound", "items[]", True, False, "maxLength 3 added")]
    assert said(old, defs({"type": "string"})) == []
    legacy = {**defs({"type": "integer"}, "#/definitions/Item"), "definitions": {}}
    legacy["definitions"] = legacy.pop("$defs")
    narrowed = copy.deepcopy(legacy)
    narrowed["definitions"]["Item"]["minimum"] = 0
    assert said(legacy, narrowed) == [("bound", "items[]", True, False, "minimum 0 added")]


def test_a_ref_out_of_the_definitions_is_followed() -> None:
    # the ref into the definitions is written alike, the definitions too, but one of them
    # refers out of them, to what changed
    old = defs({"$ref": "#/properties/x"})
    new = copy.deepcopy(old)
    new["properties"]["x"]["format"] = "email"
    found = said(old, new)
    assert ("bound", "x", True, False, 'format "email" added') in found
    assert ("bound", "items[]", True, False, 'format "email" added') in found


# -- a corrupt package at REF: whatever its schemas hold, the comparison ends ------------------

WORDS = ["type", "properties", "required", "items", "anyOf", "oneOf", "allOf", "$ref", "enum"]
WORDS += ["const", "additionalProperties", "prefixItems", "minimum", "pattern", "default"]
WORDS += ["nullable", "$defs", "not", "multipleOf", "format", "x"]
LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["object", "string", "integer", "array", "null", "x"])
    | st.sampled_from(["#", "#/$defs/x", "#/properties/x", "#/nope", "x", "#/allOf/0"])
)
ANY_JSON = st.recursive(
    LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(WORDS), inner, max_size=4)
    ),
    max_leaves=15,
)


@settings(max_examples=300, deadline=None)
@given(ANY_JSON, ANY_JSON)
def test_any_json_compares_without_a_crash(old: Any, new: Any) -> None:
    for before, after in ((old, new), (new, old), (old, old)):
        for change in compare(before, after):
            assert change.kind and isinstance(change.detail, str)
