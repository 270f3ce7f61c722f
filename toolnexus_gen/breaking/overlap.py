"""Whether two `oneOf` branches can match one value: `oneOf` refuses a value that matches two,
so a branch added (or widened) into another refuses values that were valid.

A sound, bounded check. Disjoint is proven from what rules values out on both sides: types
that share no value, `const`/`enum` values the other branch refuses, a property one requires
that the other forbids (closed, or `false`), a property both constrain to values that do not
meet (a discriminator: `kind: {const: a}` against `kind: {const: b}`). Overlap is proven by a
witness: a value built from the two branches (their consts, enums, required properties, a
few values of each type) that both accept, checked with jsonschema. Neither: None (undecided).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

Valid = Callable[[Any, Any], bool]  # (schema, value) -> whether the value is valid

TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
SAMPLES: dict[str, tuple[Any, ...]] = {
    "null": (None,),
    "boolean": (True, False),
    "integer": (0, 1, -1, 100),
    "number": (0, 1.5, -1, 100),
    "string": ("a", "", "0", "aaaaaaaaaaaaaaaaaaaa", "2024-01-01", "a@example.com"),
    "array": ([],),
    "object": ({},),
}
MAX_WITNESSES = 64


def _types(schema: dict[str, Any]) -> set[str] | None:
    """The JSON types a branch takes (None: any), from `type`, `const` or `enum`."""
    kinds = schema.get("type")
    if isinstance(kinds, str):
        found = {kinds}
    elif isinstance(kinds, list):
        found = {k for k in kinds if isinstance(k, str)}
    else:
        found = None
    values = _values(schema)
    if values is not None:
        of_values = {_type_of(v) for v in values}
        found = of_values if found is None else {t for t in of_values if _takes(found, t)}
    if found is not None and "number" in found:
        found.add("integer")
    return found


def _takes(types: set[str], kind: str) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _values(schema: dict[str, Any]) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return None


def _disjoint(a: dict[str, Any], b: dict[str, Any], valid: Valid) -> bool:
    """Whether no value can match both (proven from the keywords named above)."""
    ta, tb = _types(a), _types(b)
    if ta is not None and tb is not None and not ta & tb:
        return True
    for one, other in ((a, b), (b, a)):
        values = _values(one)
        if values is not None and not any(valid(other, v) and valid(one, v) for v in values):
            return True
    for one, other in ((a, b), (b, a)):
        refused = one.get("not")
        if isinstance(refused, dict) and refused and set(refused) <= PLAIN:
            if all(k in other and other[k] == v for k, v in refused.items()):
                return True  # one refuses what the other requires of every value
    shared = set(TYPES) if ta is None and tb is None else (ta or set(TYPES)) & (tb or set(TYPES))
    for kinds, low, high in RANGES:
        if shared <= kinds and _apart(_range(a, low, high), _range(b, low, high)):
            return True  # lengths, sizes or numbers that do not meet
    if shared != {"object"}:
        return False  # a value of another type may match both: properties say nothing of it
    for one, other in ((a, b), (b, a)):
        props = _dict(other.get("properties"))
        closed = other.get("additionalProperties") is False and not other.get("patternProperties")
        for name in _strings(one.get("required")):
            if props.get(name) is False or (closed and name not in props):
                return True  # one needs it, the other refuses it
            mine = _dict(_dict(one.get("properties")).get(name))
            theirs = props.get(name)
            if isinstance(theirs, dict) and mine and _disjoint_values(mine, theirs, valid):
                return True  # a discriminator: the property's values do not meet
    return False


# Keywords whose meaning does not depend on a sibling: a schema that holds each of them as `not`
# does holds the value inside `not`.
PLAIN = frozenset(
    {
        *("type", "pattern", "enum", "const", "minLength", "maxLength", "minimum", "maximum"),
        *("exclusiveMinimum", "exclusiveMaximum", "multipleOf", "required", "minItems"),
        *("maxItems", "uniqueItems", "minProperties", "maxProperties", "properties"),
    }
)
# (the types a range applies to, its lower and upper keywords)
RANGES = (
    ({"string"}, ("minLength",), ("maxLength",)),
    ({"array"}, ("minItems",), ("maxItems",)),
    ({"integer", "number"}, ("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")),
)


def _range(schema: dict[str, Any], low: tuple[str, ...], high: tuple[str, ...]) -> tuple[Any, ...]:
    """(lowest, whether it is excluded, highest, whether it is excluded); None: unbounded."""
    lo = hi = None
    lo_out = hi_out = False
    for key in low:
        value = schema.get(key)
        if _number(value) and (lo is None or value >= lo):
            lo, lo_out = value, key.startswith("exclusive")
    for key in high:
        value = schema.get(key)
        if _number(value) and (hi is None or value <= hi):
            hi, hi_out = value, key.startswith("exclusive")
    return lo, lo_out, hi, hi_out


def _apart(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two ranges share no value (a value over one's top is under the other's bottom)."""
    for (_, _, hi, hi_out), (lo, lo_out, _, _) in ((a, b), (b, a)):
        if hi is not None and lo is not None and (hi < lo or (hi == lo and (hi_out or lo_out))):
            return True
    return False


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _bounded(schema: dict[str, Any], kind: str) -> Iterator[Any]:
    """Values at a branch's own bounds, and strings its pattern matches."""
    if kind == "string":
        for key in ("minLength", "maxLength"):
            if _number(schema.get(key)) and 0 <= schema[key] <= 1000:
                yield "a" * int(schema[key])
        if isinstance(schema.get("pattern"), str):
            from toolnexus_gen.breaking.pattern import strings

            yield from strings(schema["pattern"])[:16]
    elif kind in ("integer", "number"):
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if _number(schema.get(key)):
                edge = schema[key]
                step = 1 if kind == "integer" else 0.5
                yield from (edge, edge + step, edge - step)


def _disjoint_values(a: dict[str, Any], b: dict[str, Any], valid: Valid) -> bool:
    """A property's schemas that share no value, shown by types, consts or enums only."""
    ta, tb = _types(a), _types(b)
    if ta is not None and tb is not None and not ta & tb:
        return True
    for one, other in ((a, b), (b, a)):
        values = _values(one)
        if values is not None and not any(valid(other, v) for v in values):
            return True
    return False


def _candidates(
    a: dict[str, Any], b: dict[str, Any], valid: Valid, depth: int = 0
) -> Iterator[Any]:
    """Values worth trying against both branches."""
    for one in (a, b):
        values = _values(one)
        if values is not None:
            yield from values[:MAX_WITNESSES]
    for key in ("default", "examples"):
        for one in (a, b):
            if key in one:
                yield from (
                    one[key] if key == "examples" and isinstance(one[key], list) else [one[key]]
                )
    ta, tb = _types(a), _types(b)
    kinds = [t for t in TYPES if (ta is None or t in ta) and (tb is None or t in tb)]
    for kind in kinds:
        if kind == "object" and depth < 3:
            yield from _objects(a, b, valid, depth)
        elif kind == "array" and depth < 3:
            items_a, items_b = _dict(a.get("items")), _dict(b.get("items"))
            for item in _first(_candidates(items_a, items_b, valid, depth + 1), 4):
                yield [item]
            yield []
        else:
            yield from SAMPLES[kind]
            for one in (a, b):
                yield from _bounded(one, kind)


def _objects(a: dict[str, Any], b: dict[str, Any], valid: Valid, depth: int) -> Iterator[Any]:
    """Objects with the properties either branch requires, each a value both take."""
    names = list(dict.fromkeys([*_strings(a.get("required")), *_strings(b.get("required"))]))
    pa, pb = _dict(a.get("properties")), _dict(b.get("properties"))
    built: dict[str, Any] = {}
    for name in names:
        sa, sb = _dict(pa.get(name)), _dict(pb.get(name))
        chosen = next(
            (
                v
                for v in _first(_candidates(sa, sb, valid, depth + 1), MAX_WITNESSES)
                if valid(sa, v) and valid(sb, v)
            ),
            _NONE,
        )
        if chosen is _NONE:
            return
        built[name] = chosen
    yield built


_NONE: Any = object()


def _first(values: Iterator[Any], count: int) -> Iterator[Any]:
    for i, value in enumerate(values):
        if i >= count:
            return
        yield value


def overlap(a: Any, b: Any, valid: Valid) -> tuple[bool | None, Any]:
    """(True: a value matches both, with that value; False: none can (proven); None:
    undecided). `valid(schema, value)` checks a value against a branch (its $refs resolved
    from the schema's root); whatever it raises leaves the question undecided."""
    if a is False or b is False:
        return False, None
    a = {} if a is True else a
    b = {} if b is True else b
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None, None
    try:
        if _disjoint(a, b, valid):
            return False, None
        seen: set[str] = set()
        for value in _first(_candidates(a, b, valid), MAX_WITNESSES):
            key = json.dumps(value, sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            if valid(a, value) and valid(b, value):
                return True, value
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot check: undecided
        return None, None
    return None, None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
