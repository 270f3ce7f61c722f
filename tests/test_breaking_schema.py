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
        # a required property removed: a value with it is refused (closed) or ignored now, and
        # one without it, refused before, goes through
        (
            {
                "type": "object",
                "properties": {"a": {"type": "boolean"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
            True,
            True,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
            {"type": "object", "properties": {}},
            True,
            True,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "boolean"}}},
            {"type": "object", "properties": {}},
            True,
            False,
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


def test_a_pattern_format_narrows_only_where_the_model_checks_it() -> None:
    """`byte`, `email`, ...: the model adds its pattern to a string alone that has none of its
    own; beside the node's own pattern, or on a string that may be another type, nothing more
    is refused, so adding the format is no narrowing."""

    def said_on(x: dict[str, Any], kind: str) -> list[Any]:
        old = {"type": "object", "properties": {"x": x}}
        new = {"type": "object", "properties": {"x": {**x, "format": kind}}}
        return [found for found in said(old, new) if found[2]]  # the breaking ones

    for kind in ("byte", "email"):
        narrowed = ("bound", "x", True, False, f'format "{kind}" added')
        assert said_on({"type": "string"}, kind) == [narrowed]
        assert said_on({"type": ["string", "null"]}, kind) == [narrowed]
        assert said_on({"type": "string", "pattern": "^[A-Z]+$"}, kind) == []
        assert said_on({"type": ["string", "integer"]}, kind) == []


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


def _doubled(depth: int, key: str, *, distinct: bool = False) -> dict[str, Any]:
    """`city` through D0 .. D<depth>, each D<i> two $refs to the next under `key` (anyOf or
    allOf): 2**depth paths to the last one (with `distinct`, each alternative differs)."""
    defs: dict[str, Any] = {
        f"D{i}": {
            key: [
                {"$ref": f"#/$defs/D{i + 1}"},
                {"$ref": f"#/$defs/D{i + 1}", **({"minLength": i} if distinct else {})},
            ]
        }
        for i in range(depth)
    }
    defs[f"D{depth}"] = {"type": "string"}
    return {"type": "object", "properties": {"city": {"$ref": "#/$defs/D0"}}, "$defs": defs}


CITY = {"type": "object", "properties": {"city": {"type": "string"}}}


@pytest.mark.parametrize("key", ["anyOf", "allOf"])
def test_refs_reached_many_ways_are_resolved_once(key: str) -> None:
    # 2**40 paths through the definitions: each one is expanded once, and found a string
    assert said(_doubled(40, key), CITY) == []
    assert said(CITY, _doubled(40, key)) == []
    narrower = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 9}}}
    assert said(_doubled(40, key), narrower) == [
        ("bound", "city", True, False, "maxLength 9 added")
    ]


def test_a_schema_past_the_work_budget_is_not_compared() -> None:
    # 2**30 alternatives that differ: reported as not compared, never expanded
    for old, new in (
        (_doubled(30, "anyOf", distinct=True), CITY),
        (CITY, _doubled(30, "anyOf", distinct=True)),
    ):
        changes = compare(old, new)
        assert [(c.kind, c.path, c.pointer, c.narrows, c.widens) for c in changes] == [
            ("bound", "city", "/properties/city", True, True)
        ]
        assert changes[0].detail.startswith("not compared: its schema is too complex (over ")


def test_a_ref_chain_past_the_depth_bound_is_not_compared() -> None:
    changes = compare(_doubled(1000, "allOf"), CITY)
    assert [(c.kind, c.path, c.narrows, c.detail) for c in changes] == [
        ("bound", "city", True, "not compared: its schema is too complex (nested over 100 deep)")
    ]


@pytest.mark.parametrize(
    "definition",
    [
        {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]},
        {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/A", "description": "again"}]},
        {"allOf": [{"$ref": "#/$defs/A"}]},
        {"allOf": [{"$ref": "#/$defs/B"}, {"type": "string"}]},
    ],
)
def test_a_ref_cycle_through_any_of_or_all_of_ends(definition: dict[str, Any]) -> None:
    cyclic = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/A"}},
        "$defs": {"A": definition, "B": {"allOf": [{"$ref": "#/$defs/A"}]}},
    }
    assert said(cyclic, copy.deepcopy(cyclic)) == []
    assert said(cyclic, {**cyclic, "description": "d"}) == [
        ("description", "", False, False, "description of the arguments added")
    ]
    other = {"type": "object", "properties": {"x": {"type": "integer"}}}
    # the repeat stands as written: compared by its text, a change counts as narrowing
    assert any(c.narrows for c in compare(cyclic, other))
    assert any(c.narrows for c in compare(other, cyclic))
    renamed = copy.deepcopy(cyclic)
    renamed["$defs"]["A"]["x-note"] = "kept"
    assert said(cyclic, renamed) == []


def _with_pattern(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}


@pytest.mark.parametrize(
    ("old", "new", "narrows", "widens", "proven"),
    [
        (r"^[a-z]{1,10}$", r"^[a-z]{1,20}$", False, True, True),  # a quantifier widened
        (r"^[a-z]+$", r"^[a-z0-9_]+$", False, True, True),  # a class widened
        (r"^(foo|bar)$", r"^(foo|bar|baz)$", False, True, True),  # a branch added
        (r"^[A-Z]{2}-\d+$", r"^[A-Z]{2,3}-\d+(-\d+)?$", False, True, True),
        (r"^abc$", r"abc", False, True, True),  # anchors dropped
        (r"^[a-z]{1,10}$", r"^[a-z]{1,5}$", True, False, True),  # shown by a string
        (r"^(foo|bar|baz)$", r"^(foo|bar)$", True, False, True),
        (r"abc", r"^abc$", True, False, True),
        (r"^[a-z]+$", r"^(?=a)[a-z]+$", True, True, True),  # a look-ahead: shown by "b"
        (r"^[a-z]+$", r"(?i)^[a-z]+$", False, True, True),  # letters in both cases now
        (r"^[a-z]+$", r"(?s)^[a-z]+$", True, True, False),  # a flag not read: not compared
    ],
)
def test_a_changed_pattern(old: str, new: str, narrows: bool, widens: bool, proven: bool) -> None:
    (change,) = compare(_with_pattern(old), _with_pattern(new))
    assert (change.narrows, change.widens, change.proven) == (narrows, widens, proven)


def test_a_pattern_written_otherwise_is_no_change() -> None:
    assert compare(_with_pattern(r"^\d\d\d$"), _with_pattern(r"^[0-9]{3}$")) == []


_PIECES = st.sampled_from(["a", "b", "[ab]", "[a-c]", r"\d", "[0-9a]", "(ab|c)", "x"])
_QUANTS = st.sampled_from(["", "?", "+", "*", "{1,2}", "{2}", "{0,3}"])
_SIMPLE = st.builds(
    lambda anchor, parts, end: anchor + "".join(parts) + end,
    st.sampled_from(["", "^"]),
    st.lists(st.builds(lambda p, q: p + q, _PIECES, _QUANTS), min_size=1, max_size=4),
    st.sampled_from(["", "$"]),
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(old=_SIMPLE, new=_SIMPLE, data=st.data())
def test_a_pattern_proven_looser_takes_every_string_the_old_one_does(
    old: str, new: str, data: Any
) -> None:
    import re

    from toolnexus_gen.breaking.pattern import loosened

    wider, witness = loosened(old, new)
    if wider is False:
        assert witness is not None and re.search(old, witness) and not re.search(new, witness)
    if wider:
        for _ in range(10):
            text = data.draw(st.from_regex(old))
            assert re.search(new, text), (old, new, text)


@pytest.mark.parametrize(
    ("old", "new"),
    [(float("inf"), 2), (2, float("inf")), (float("nan"), 2), (2, float("nan")), (10**400, 3)],
)
def test_a_multiple_of_past_floats_is_a_change_told(old: float, new: float) -> None:
    # JSON reads 1e400 as inf and NaN as nan: compared, never a crash (an old step no longer
    # proven to hold every new multiple is a narrowing; jsonschema takes every number as a
    # multiple of inf, so a new step of inf narrows nothing)
    (change,) = compare(_number_step(old), _number_step(new))
    assert change.kind == "bound" and "multipleOf changed" in change.detail
    assert change.narrows == (new != float("inf"))


def _number_step(step: float) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": "number", "multipleOf": step}}}


def test_a_bound_beside_a_nested_anyof_holds_with_the_branches_own() -> None:
    """`minimum: 2` beside an anyOf whose integer branch says `minimum: 0`: both hold, so the
    integers 0 and 1 are refused now (found by the property test)."""
    inner: dict[str, Any] = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}
    old = {"anyOf": [inner, {"type": "null"}]}
    new = {"anyOf": [{**inner, "minimum": 2}, {"type": "null"}]}
    changes = compare(old, new)
    assert [(c.pointer, c.narrows, c.detail) for c in changes if c.narrows] == [
        ("/anyOf/0/anyOf/0/minimum", True, "minimum tightened from 0 to 2")
    ]
    narrowed = {"anyOf": [{**inner, "maxLength": 3, "enum": [0, 1, None]}, {"type": "null"}]}
    assert any(c.narrows for c in compare(old, narrowed))
