"""JSON Schema 2020-12 meta-validation in time linear in a schema's size.

Validating a schema against the full 2020-12 meta-schema descends into every subschema through
`$dynamicRef`, resolving references at every step: a 20,000-property object took a minute, and
an OpenAPI import validates such a component once per operation that uses it. Here each schema
object is checked against the meta-schema's rules for its own keywords only (a subschema is
checked to be an object or a boolean, as the meta-schema's first rule says), then each
subschema in turn; an object already checked (the same keywords and values, subschemas aside)
is not checked again. The errors are the full meta-schema's: same messages, same places.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

# jsonschema, referencing and the meta-schemas are imported when a schema object is not plain:
# a build's checks of plain schemas need none of them.

# where the 2020-12 meta-schema descends: a schema, a list of schemas, a map of schemas
ONE = (
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
MAPS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
DEPENDENCIES = "dependencies"  # a map of schemas or string arrays (deprecated, still checked)

_META = "https://json-schema.org/draft/2020-12/"
_SHALLOW = "https://toolnexus.invalid/2020-12-shallow/"
_SCHEMA = {"type": ["object", "boolean"]}  # what a subschema must be, from its parent's view


class MetaError(NamedTuple):
    path: tuple[str | int, ...]  # from the schema's root to the keyword in error
    message: str
    instance: Any


@cache
def _shallow_validator() -> Draft202012Validator:
    """The meta-schema and its vocabularies, each `$dynamicRef: #meta` (a subschema) replaced by
    `{type: [object, boolean]}`, under addresses of their own so nothing reaches the originals."""
    import referencing
    import referencing.jsonschema
    from jsonschema import Draft202012Validator
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            if node.get("$dynamicRef") == "#meta":
                return dict(_SCHEMA)
            out = {k: rewrite(v) for k, v in node.items() if k != "$dynamicAnchor"}
            if isinstance(out.get("$id"), str):
                out["$id"] = out["$id"].replace(_META, _SHALLOW)
            return out
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    resources = []
    for uri in REGISTRY:
        if uri.startswith(_META):
            contents = rewrite(copy.deepcopy(REGISTRY.contents(uri)))
            resources.append((uri.replace(_META, _SHALLOW), contents))
    registry: referencing.Registry[Any] = referencing.Registry().with_contents(
        resources, default_specification=referencing.jsonschema.DRAFT202012
    )
    root = registry.contents(f"{_SHALLOW}schema")
    return Draft202012Validator(root, registry=registry)


class MetaCheck:
    """Meta-validation with a memory: one per run (an import, a build), so a schema object that
    many tools share is checked once."""

    def __init__(self) -> None:
        self._memo: dict[str, list[tuple[tuple[str | int, ...], str, Any]]] = {}

    def errors(self, schema: Any) -> Iterator[MetaError]:
        """The schema's meta-schema errors, in the order of a depth-first walk."""
        validator = _shallow_validator()
        stack: list[tuple[Any, tuple[str | int, ...]]] = [(schema, ())]
        while stack:
            node, path = stack.pop()
            if isinstance(node, bool):
                continue
            key = _key(node)
            found = self._memo.get(key)
            if found is None and _plainly_valid(node):
                found = self._memo[key] = []
            if found is None:
                unique = {  # each vocabulary says "not an object or a boolean": once is enough
                    (tuple(e.absolute_path), e.message): e.instance
                    for e in validator.iter_errors(node)
                }
                found = [
                    (where, message, instance) for (where, message), instance in unique.items()
                ]
                self._memo[key] = found
            for where, message, instance in found:
                yield MetaError((*path, *where), message, instance)
            if isinstance(node, dict):
                stack.extend(reversed(list(_children(node, path))))


def _children(
    node: dict[str, Any], path: tuple[str | int, ...]
) -> Iterator[tuple[Any, tuple[str | int, ...]]]:
    for keyword, value in node.items():
        if keyword in ONE:
            yield value, (*path, keyword)
        elif keyword in LISTS and isinstance(value, list):
            for index, item in enumerate(value):
                yield item, (*path, keyword, index)
        elif (keyword in MAPS or keyword == DEPENDENCIES) and isinstance(value, dict):
            for name, item in value.items():
                if keyword != DEPENDENCIES or isinstance(item, (dict, bool)):
                    yield item, (*path, keyword, name)


def _key(node: Any) -> str:
    """What the shallow check of `node` depends on: its keywords and values, each subschema
    reduced to whether it is one (an object or a boolean). `repr` tells apart what JSON would
    not (1, 1.0 and True); the same object with its keys in another order is merely checked
    again."""
    if not isinstance(node, dict):
        return repr(node)

    def shape(value: Any) -> Any:  # {} stands for any subschema: no other value is a dict
        return {} if isinstance(value, (dict, bool)) else value

    shaped: dict[str, Any] = {}
    for keyword, value in node.items():
        if keyword in ONE:
            shaped[keyword] = shape(value)
        elif keyword in LISTS and isinstance(value, list):
            shaped[keyword] = [shape(v) for v in value]
        elif (keyword in MAPS or keyword == DEPENDENCIES) and isinstance(value, dict):
            shaped[keyword] = {k: shape(v) for k, v in value.items()}
        else:
            shaped[keyword] = value
    return repr(shaped)


# -- the common case, decided without the validator ---------------------------------------------
# A schema object whose every keyword is one of these, with a value of the kind the meta-schema
# asks for, has no meta-schema error of its own (its subschemas are checked in their turn). Any
# other object goes through the validator, which gives the errors. Most objects of a real
# schema are plain: the validator costs about 10 ms an object, this a few microseconds.
_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _schema(value: Any) -> bool:
    return isinstance(value, (dict, bool))


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and v in _TYPES for v in value)
        and len(set(value)) == len(value)
    )


def _names(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


_PLAIN: dict[str, Any] = {
    "type": _type,
    "required": _names,
    "enum": lambda v: isinstance(v, list),
    "examples": lambda v: isinstance(v, list),
    "const": lambda v: True,
    "default": lambda v: True,
    "multipleOf": lambda v: _number(v) and v > 0,
    "uniqueItems": lambda v: isinstance(v, bool),
    "readOnly": lambda v: isinstance(v, bool),
    "writeOnly": lambda v: isinstance(v, bool),
    "deprecated": lambda v: isinstance(v, bool),
    "dependentRequired": lambda v: isinstance(v, dict) and all(map(_names, v.values())),
    **{k: _schema for k in ONE},
    **{k: lambda v: isinstance(v, list) and bool(v) and all(map(_schema, v)) for k in LISTS},
    **{
        k: lambda v: isinstance(v, dict) and all(map(_schema, v.values()))
        for k in ("properties", "patternProperties", "dependentSchemas", "$defs")
    },
    **{k: lambda v: isinstance(v, str) for k in ("$ref", "title", "description", "format")},
    **{k: lambda v: isinstance(v, str) for k in ("$comment", "pattern", "contentMediaType")},
    **{k: _number for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")},
    **{
        k: _count
        for k in (
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "minContains",
            "maxContains",
        )
    },
}


def _plainly_valid(node: Any) -> bool:
    """True when `node` is an object of plain keywords with values of the right kind."""
    if not isinstance(node, dict):
        return False
    for keyword, value in node.items():
        check = _PLAIN.get(keyword)
        if check is None or not check(value):
            return False
    return True
