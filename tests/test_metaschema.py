"""toolspec/metaschema.py: meta-validation one schema object at a time, remembered, finds exactly
the errors the full 2020-12 meta-schema finds (the same messages at the same places)."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import ROOT
from jsonschema import Draft202012Validator

from toolnexus_gen.toolspec.metaschema import MetaCheck

FULL = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def full_errors(schema: Any) -> set[tuple[tuple[str, ...], str]]:
    return {(tuple(map(str, e.absolute_path)), e.message) for e in FULL.iter_errors(schema)}


def fast_errors(check: MetaCheck, schema: Any) -> set[tuple[tuple[str, ...], str]]:
    return {(tuple(map(str, e.path)), e.message) for e in check.errors(schema)}


CASES: list[Any] = [
    {"type": "foo"},
    {"items": 5},
    {"properties": {"a": {"type": 3}, "b": True, "c": 7}},
    {"allOf": []},
    {"anyOf": [1, {"type": "string"}]},
    {"required": "x"},
    {"required": ["a", "a"]},
    {"minimum": "3"},
    {"$defs": {"X": {"enum": 1}}},
    {"patternProperties": {"[": {}}},
    {"contentSchema": {"type": 1}},
    {"$ref": 5},
    {"not": {"not": {"const": 1, "type": ["string", "string"]}}},
    {"type": ["string", "null"], "enum": [1, 1]},
    {"definitions": {"a": {"items": [1]}}},
    {"unevaluatedProperties": {"type": {}}},
    {"prefixItems": {"a": 1}},
    {"properties": []},
    {"$id": 5, "$anchor": "1bad"},
    {"multipleOf": 0},
    {"maxLength": -1},
    {"deprecated": "yes"},
    {"dependentRequired": {"a": [1]}},
    {"contains": {"minContains": -1}},
    5,
    "x",
    None,
    True,
]


@pytest.mark.parametrize("schema", CASES, ids=lambda s: json.dumps(s)[:40])
def test_the_same_errors_as_the_full_meta_schema(schema: Any) -> None:
    assert fast_errors(MetaCheck(), schema) == full_errors(schema)


def real_schemas() -> Iterator[Any]:
    for path in sorted((ROOT / "examples").glob("*/specs/**/*.yaml")):
        spec = yaml.safe_load(path.read_text())
        for key in ("input_schema", "output_schema"):
            if isinstance(spec, dict) and isinstance(spec.get(key), dict):
                yield spec[key]


def test_the_same_errors_on_real_schemas_and_their_mutations() -> None:
    rng = random.Random(24)
    check = MetaCheck()  # one memory across all: a remembered object answers for another
    bad_values: list[Any] = [5, "x", None, [], {}, [1], {"a": 1}, -1, True, ["string"], 0.5]
    keywords = ["type", "items", "properties", "required", "enum", "minimum", "allOf", "$ref"]
    keywords += ["additionalProperties", "format", "pattern", "title", "not", "const"]
    compared = 0
    for schema in real_schemas():
        assert fast_errors(check, schema) == full_errors(schema)
        for _ in range(10):
            mutated = copy.deepcopy(schema)
            nodes = list(objects(mutated))
            rng.choice(nodes)[rng.choice(keywords)] = rng.choice(bad_values)
            assert fast_errors(check, mutated) == full_errors(mutated), json.dumps(mutated)
            compared += 1
    assert compared > 100


def objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from objects(item)
