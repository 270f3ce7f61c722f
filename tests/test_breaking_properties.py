"""The schema comparison behind `toolnexus-gen breaking`, against JSON Schema itself: when it
reports no narrowing between two schemas, every value the old one accepts (drawn by
hypothesis-jsonschema) is accepted by the new one (checked by jsonschema). And the reverse for
output schemas: a change it calls compatible for readers never lets a value through that the
old schema refused.

Objects are closed in the drawn schemas: `breaking` assumes callers send only the arguments a
schema lists (a new optional argument on an open object is a widening, as the contract says).
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator

from toolnexus_gen.breaking.schema import compare

NAMES = ("a", "b", "c")


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    strings = st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(3, 6),
            "enum": st.lists(
                st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3, unique=True
            ),
        },
    )
    integers = st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={"minimum": st.integers(-5, 0), "maximum": st.integers(1, 9)},
    )
    numbers = st.fixed_dictionaries(
        {"type": st.just("number")}, optional={"maximum": st.integers(0, 9)}
    )
    return st.one_of(strings, integers, numbers, st.just({"type": "boolean"}))


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        objects = st.dictionaries(st.sampled_from(NAMES), inner, max_size=3).flatmap(
            lambda props: st.fixed_dictionaries(
                {
                    "type": st.just("object"),
                    "properties": st.just(props),
                    "required": st.lists(st.sampled_from(sorted(props)), unique=True)
                    if props
                    else st.just([]),
                    "additionalProperties": st.just(False),
                }
            )
        )
        arrays = st.fixed_dictionaries(
            {"type": st.just("array"), "items": inner}, optional={"maxItems": st.integers(1, 3)}
        )
        nullable = inner.map(lambda s: {"anyOf": [s, {"type": "null"}]})
        return st.one_of(objects, arrays, nullable)

    return st.recursive(leaves(), extend, max_leaves=5)


def nodes(schema: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every schema object inside `schema`."""
    found = [path]
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("items", "additionalProperties") and isinstance(value, dict):
                found += nodes(value, (*path, key))
            elif key == "properties":
                for name, sub in value.items():
                    found += nodes(sub, (*path, key, name))
            elif key == "anyOf":
                for i, sub in enumerate(value):
                    found += nodes(sub, (*path, key, i))
    return found


def at(schema: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        schema = schema[part]
    return schema


MUTATIONS = (
    "retype",
    "bound",
    "enum",
    "required",
    "property",
    "open",
    "nullable",
    "items",
)


def mutate(schema: dict[str, Any], path: tuple[Any, ...], how: str, pick: int) -> dict[str, Any]:
    new = copy.deepcopy(schema)
    node = at(new, path)
    kind = node.get("type")
    if how == "retype" and isinstance(kind, str):
        node["type"] = ["string", "integer", "number", "boolean"][pick % 4]
        for key in ("enum", "minLength", "maxLength", "minimum", "maximum"):
            node.pop(key, None)
    elif how == "bound":
        key = ["minLength", "maxLength", "minimum", "maximum", "maxItems"][pick % 5]
        if key in node:
            node[key] += (pick % 3) - 1
        else:
            node[key] = pick % 4
    elif how == "enum" and "enum" in node:
        values = list(node["enum"])
        if pick % 2 and len(values) > 1:
            values.pop(pick % len(values))
        else:
            values.append(["x", "y", "z", "w", "v"][pick % 5])
        node["enum"] = list(dict.fromkeys(values))
    elif how == "required" and kind == "object" and node["properties"]:
        name = sorted(node["properties"])[pick % len(node["properties"])]
        required = node["required"]
        node["required"] = (
            [n for n in required if n != name] if name in required else [*required, name]
        )
    elif how == "property" and kind == "object":
        if pick % 2 and node["properties"]:
            name = sorted(node["properties"])[pick % len(node["properties"])]
            del node["properties"][name]
            node["required"] = [n for n in node["required"] if n != name]
        else:
            node["properties"]["d"] = {"type": "string"}
            if pick % 3 == 0:
                node["required"] = [*node["required"], "d"]
    elif how == "open" and kind == "object":
        node["additionalProperties"] = pick % 2 == 0 and {"type": "integer"}
    elif how == "nullable":
        if "anyOf" in node:
            inner = node["anyOf"][0]
            node.clear()
            node.update(inner)
        elif isinstance(kind, str) and kind not in ("object", "array"):
            node["type"] = [kind, "null"]
    elif how == "items" and kind == "array":
        node["items"] = {} if pick % 2 else {"type": "null"}
    return new


def accepts(schema: dict[str, Any], value: Any) -> bool:
    return Draft202012Validator(schema).is_valid(value)


@settings(
    max_examples=int(os.environ.get("TNX_EXAMPLES", "80")),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(st.data())
def test_no_narrowing_reported_means_every_old_value_is_still_accepted(data: st.DataObject) -> None:
    old = data.draw(schemas(), label="old")
    path = data.draw(st.sampled_from(nodes(old)), label="path")
    how = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    new = mutate(old, path, how, data.draw(st.integers(0, 60), label="pick"))
    changes = compare(old, new)
    narrows = [c for c in changes if c.narrows]
    widens = [c for c in changes if c.widens]
    for _ in range(4):
        value = data.draw(from_schema(old), label="value valid at old")
        if not narrows:
            assert accepts(new, value), (changes, value)
    if not widens:  # the other way round: nothing new gets through
        for _ in range(4):
            value = data.draw(from_schema(new), label="value valid now")
            assert accepts(old, value), (changes, value)
