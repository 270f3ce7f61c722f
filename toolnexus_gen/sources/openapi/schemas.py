"""OpenAPI schemas made JSON Schema 2020-12, with every component shared by reference.

A schema a `$ref` reaches is converted once and written once, as a file of its own in the
import's folder of shared schemas (`specs/_<api>/<Name>.json`, a folder the build reads
fragments from, never tools); tools and other shared schemas refer to it by path. So the specs
an import writes, and the schemas a build makes from them, grow with what each tool uses, not
with the number of tools times the components they share.

A component whose properties differ between a request and a response (readOnly properties
leave requests, writeOnly ones leave responses), or that reaches one that does, is written
twice: `<Name>.json` for responses and `<Name>_input.json` for requests.

Conversion: OpenAPI 3.0's `nullable` becomes a `null` type (or an anyOf with null), boolean
`exclusiveMinimum`/`exclusiveMaximum` become numbers, `example` becomes `examples`;
`discriminator`, `xml`, `externalDocs` and `x-` extensions are dropped, and so, with a note, are
the keywords that would name Python code for the argument models (datamodel-code-generator's
`customTypePath`, `x-python-type`, ...: toolspec/codegen_keywords.py). `nullable: true` in a
3.1 document is read the same way (its author's intent is plain; 3.1 itself ignores it). A
`default` its own `type` refuses (OpenAI's `max_tokens: {type: integer, default: inf}`) is left
out, with a note: a model field cannot hold it, and a server never sees a default anyway.

A component that cannot be converted (not a schema, a broken $ref, not valid JSON Schema once
converted, or one that reaches itself with nothing in between, `A: {allOf: [{$ref: A}]}`) is
recorded once: each operation that reaches it is skipped with that located reason, the others
are imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from toolnexus_gen.sources.openapi.document import At, Files, Skip
from toolnexus_gen.sources.openapi.naming import component_name, free
from toolnexus_gen.toolspec.bundle import ANNOTATIONS, ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS
from toolnexus_gen.toolspec.codegen_keywords import DATA, is_codegen_keyword, strip
from toolnexus_gen.toolspec.metaschema import MetaCheck
from toolnexus_gen.toolspec.pointer import unescape

DROPPED = {"discriminator", "xml", "externalDocs", "nullable", "example"}
INPUT, OUTPUT = "input", "output"
HIDDEN = {INPUT: "readOnly", OUTPUT: "writeOnly"}
# How much schema (compact JSON, with every shared schema it reaches counted once) a tool's
# arguments and its result may hold. Every provider entry carries its tool's whole closure, so
# past this an operation would cost each request tens of thousands of tokens, and each build
# work in proportion (Microsoft Graph's entity hierarchy reaches 500 KB from one create
# operation): an operation whose arguments pass it is skipped (TN472), a result schema past it
# left out of its spec (TN473).
BUDGET = {INPUT: 64_000, OUTPUT: 64_000}


class Shared:
    """The shared schema files of one import: converted on first use, each checked once."""

    def __init__(self, files: Files, folder: str, v30: bool) -> None:
        self.files = files
        self.folder = folder  # the folder's name under the spec folder: _<api>
        self.v30 = v30
        self.meta = MetaCheck()
        self.schemas: dict[str, Any] = {}  # file name (no suffix) -> converted schema
        self._names: dict[tuple[Path, str, str], str] = {}  # (file, pointer, direction) -> name
        self._broken: dict[tuple[Path, str], Skip] = {}
        self._sensitive: dict[tuple[Path, str], bool] = {}
        self._where: dict[str, At] = {}  # name -> what it was made from
        self._in_place: dict[str, set[str]] = {}  # name -> names applied to the same value
        self._reached: dict[str, set[str]] = {}  # name -> every name its $refs give
        self._loop_free: set[str] = set()
        # id of a converted schema -> (it, its kinds) (Converter.kinds), or (it, whether it is
        # an object made of allOf branches) (Converter._all_objects): each schema judged once,
        # so a graph of schemas that name the next level twice costs its size, not its paths
        # (the schema is held, so that its id is not reused)
        self.kinds: dict[int, tuple[Any, frozenset[str]]] = {}
        self.objects: dict[int, tuple[Any, bool]] = {}
        self.notes: list[str] = []  # what the conversion left out, and where
        self._sizes: dict[str, int] = {}  # name -> the size of its compact JSON text

    # -- references ---------------------------------------------------------------------------

    def ref(self, node: dict[str, Any], at: At, direction: str) -> str:
        """The path (from the spec folder) of the shared file for what the $ref at `at` names."""
        target, target_at = self.files.follow(node["$ref"], at)
        key = target_at.key
        if key in self._broken:
            raise self._broken[key]
        if not self.sensitive(target, target_at):
            direction = OUTPUT  # one file serves both
        name = self._names.get((*key, direction))
        if name is None:
            base = component_name(target_at.pointer, target_at.doc.path.stem)
            name = free(base if direction == OUTPUT else f"{base}_input", set(self.schemas))
            self._names[(*key, direction)] = name
            self.schemas[name] = {}  # reserved: a schema may reach itself
            self._where[name] = target_at
            try:
                converter = Converter(self, direction)
                schema = converter.convert(target, target_at)
                converter.check(schema, loops=False)  # loops: once all it reaches is made
            except Skip as exc:
                del self.schemas[name], self._names[(*key, direction)]
                self._broken[key] = exc
                raise
            self.schemas[name] = schema
            self._in_place[name] = set(_refs(schema, self.folder, in_place=True))
            self._reached[name] = set(_refs(schema, self.folder, in_place=False))
        return self.path(name)

    def path(self, name: str) -> str:
        return f"{self.folder}/{name}.json"

    def named(self, ref: Any) -> str | None:
        """The shared file's name a $ref written by this import points to, else None."""
        prefix = f"{self.folder}/"
        if isinstance(ref, str) and ref.startswith(prefix) and ref.endswith(".json"):
            return ref[len(prefix) : -len(".json")]
        return None

    def resolve(self, schema: Any) -> Any:
        """A schema followed through its $refs to shared files."""
        for _ in range(16):
            name = self.named(schema.get("$ref")) if isinstance(schema, dict) else None
            if name is None:
                return schema
            schema = self.schemas.get(name)
        return None

    def sensitive(self, raw: Any, at: At) -> bool:
        """Whether this schema (or one it reaches) has readOnly or writeOnly properties, so
        that requests and responses need two files."""
        if at.key in self._sensitive:
            return self._sensitive[at.key]
        reach: dict[tuple[Path, str], tuple[bool, list[tuple[Path, str]]]] = {}
        stack = [(raw, at)]
        while stack:
            node, where = stack.pop()
            if where.key in reach or where.key in self._sensitive:
                continue
            own, refs = False, []
            for kind, holder, ref_at in _scan(node, where):
                if kind == "property":  # is it readOnly or writeOnly?
                    own = own or any(self.flagged(holder, ref_at, f) for f in HIDDEN.values())
                    continue
                try:
                    target, target_at = self.files.follow(holder["$ref"], ref_at)
                except Skip:
                    continue  # reported when it is converted
                refs.append(target_at.key)
                stack.append((target, target_at))
            reach[where.key] = (own, refs)
        changed = True
        result = {key: own for key, (own, _) in reach.items()}
        while changed:
            changed = False
            for key, (_, refs) in reach.items():
                if not result[key] and any(
                    result.get(r, self._sensitive.get(r, False)) for r in refs
                ):
                    result[key] = changed = True
        self._sensitive.update(result)
        return self._sensitive[at.key]

    def flagged(self, value: Any, at: At, flag: str) -> bool:
        """A property schema marked readOnly (or writeOnly), itself or through its $ref."""
        if not isinstance(value, dict):
            return False
        if value.get(flag) is True:
            return True
        if "$ref" in value:
            try:
                target, _ = self.files.deref(value, at)
            except Skip:
                return False
            return isinstance(target, dict) and target.get(flag) is True
        return False

    def check_loops(self, start: Any) -> None:
        """Skip for a shared schema that reaches itself through $ref, allOf, anyOf, oneOf, not
        or if/then/else only: it constrains nothing, and a validator would never finish."""
        closure: list[str] = []
        stack = [n for n in _refs(start, self.folder, in_place=False) if n not in self._loop_free]
        seen = set(stack)
        while stack:
            name = stack.pop()
            closure.append(name)
            for more in self._reached.get(name, ()):
                if more not in seen and more not in self._loop_free:
                    seen.add(more)
                    stack.append(more)
        for first in sorted(closure):
            if first in self._loop_free:
                continue
            path: list[str] = [first]
            walks = [iter(sorted(self._in_place.get(first, ())))]
            while walks:
                step = next(walks[-1], None)
                if step is None:
                    walks.pop()
                    self._loop_free.add(path.pop())
                    continue
                if step in path:
                    loop = [*path[path.index(step) :], step]
                    chain = " -> ".join(self._shown(n) for n in loop)
                    raise Skip(
                        "TN451",
                        f"this schema reaches itself with nothing in between ({chain}, through "
                        "$ref, allOf, anyOf, oneOf, not or if/then/else only): it constrains "
                        "nothing, and a validator would never finish",
                        self._where.get(step, At(self.files.root, "")),
                    )
                if step not in self._loop_free:
                    path.append(step)
                    walks.append(iter(sorted(self._in_place.get(step, ()))))

    def size(self, schema: Any) -> tuple[int, int]:
        """(bytes, shared schemas): the schema's compact JSON size with that of every shared
        schema it reaches (each once), and how many those are; a walk of the names alone."""
        total = _size(schema)
        seen: set[str] = set()
        stack = list(_refs(schema, self.folder, in_place=False))
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name not in self._sizes:
                self._sizes[name] = _size(self.schemas.get(name, {}))
            total += self._sizes[name]
            stack.extend(self._reached.get(name, ()))
        return total, len(seen)

    def reached(self, schemas: Iterator[Any]) -> set[str]:
        """The names of the shared schemas these schemas reach."""
        seen: set[str] = set()
        stack = [name for schema in schemas for name in _refs(schema, self.folder, in_place=False)]
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack.extend(self._reached.get(name, ()))
        return seen

    def _shown(self, name: str) -> str:
        at = self._where.get(name)
        if at is None:
            return name
        if at.doc is self.files.root:
            return f"#{at.pointer}"
        return f"{at.doc.path.name}#{at.pointer}"

    def texts(self, unused: AbstractSet[str] = frozenset()) -> dict[str, Any]:
        """Each shared file's name and content, its $refs made relative to its own folder (but
        those `unused`: only the result schemas left out of their specs reach them)."""
        prefix = f"{self.folder}/"
        return {
            name: _relocated(schema, prefix)
            for name, schema in sorted(self.schemas.items())
            if name not in unused
        }


def _size(schema: Any) -> int:
    return len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False))


def _relocated(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out = {k: _relocated(v, prefix) for k, v in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            out["$ref"] = ref[len(prefix) :]
        return out
    if isinstance(node, list):
        return [_relocated(v, prefix) for v in node]
    return node


def _scan(node: Any, at: At) -> Iterator[tuple[str, dict[str, Any], At]]:
    """(property schema, place) for each property, and (holder, place) for each $ref, in a
    schema (not following the refs)."""
    stack = [(node, at)]
    while stack:
        here, where = stack.pop()
        if not isinstance(here, dict):
            continue
        if "$ref" in here:
            yield "ref", here, where
        props = here.get("properties")
        if isinstance(props, dict):
            for name, value in props.items():
                if isinstance(value, dict):
                    yield "property", value, where.join("properties", name)
                stack.append((value, where.join("properties", name)))
        for key in ONE_SCHEMA:
            if key in here:
                stack.append((here[key], where.join(key)))
        for key in SCHEMA_LISTS:
            if isinstance(here.get(key), list):
                stack.extend((v, where.join(key, i)) for i, v in enumerate(here[key]))
        for key in SCHEMA_MAPS:
            if key != "properties" and isinstance(here.get(key), dict):
                stack.extend((v, where.join(key, k)) for k, v in here[key].items())


def _refs(schema: Any, folder: str, *, in_place: bool) -> Iterator[str]:
    """The shared files a schema's $refs name: all of them, or (`in_place`) those it applies to
    the same value it is given (not to its items or properties)."""
    prefix = f"{folder}/"
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            yield ref[len(prefix) : -len(".json")]
        if not in_place:
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "examples"))
            continue
        stack.extend(node[k] for k in ("not", "if", "then", "else") if k in node)
        for keyword in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(keyword), list):
                stack.extend(node[keyword])
        if isinstance(node.get("dependentSchemas"), dict):
            stack.extend(node["dependentSchemas"].values())


class Converter:
    """One schema (and the inline schemas inside it) made JSON Schema 2020-12 for a request
    (`input`) or a response (`output`); its $refs become shared files."""

    def __init__(self, shared: Shared, direction: str) -> None:
        self.shared = shared
        self.direction = direction
        self.origin: dict[int, At] = {}  # id of a converted node -> where it came from

    def convert(self, node: Any, at: At) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise Skip("TN450", "a schema must be an object", at)
        out: dict[str, Any] = {}
        self.origin[id(out)] = at
        if "$ref" in node:
            out["$ref"] = self.shared.ref(node, at, self.direction)
            if self.shared.v30:  # OpenAPI 3.0: "this object cannot be extended"
                return out
        hidden = HIDDEN[self.direction]
        for key, value in node.items():
            if is_codegen_keyword(key):
                self._steering(at.join(key))
                continue
            if key == "$ref" or key in DROPPED or key.startswith("x-"):
                continue
            where = at.join(key)
            if key in ONE_SCHEMA and isinstance(value, (dict, bool)):
                out[key] = self.convert(value, where)
            elif key in SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.convert(v, where.join(i)) for i, v in enumerate(value)]
            elif key in SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {
                    k: self.convert(v, where.join(k))
                    for k, v in value.items()
                    if not (key == "properties" and self.shared.flagged(v, where.join(k), hidden))
                }
            elif key in DATA:
                out[key] = value
            else:  # an unknown keyword's value may hold schemas a model generator reads
                out[key], removed = strip(value)
                for pointer in removed:
                    self._steering(At(where.doc, where.pointer + pointer))
        if isinstance(node.get("exclusiveMinimum"), bool):
            _exclusive(out, "exclusiveMinimum", "minimum")
        if isinstance(node.get("exclusiveMaximum"), bool):
            _exclusive(out, "exclusiveMaximum", "maximum")
        if "examples" in out and not isinstance(out["examples"], list):
            # an OpenAPI Example Object map written in a schema, where JSON Schema takes an array
            out.pop("examples")
            note = f"{at.join('examples')}: not an array of examples (a map of Example Objects?): left out"
            if note not in self.shared.notes:
                self.shared.notes.append(note)
        if "example" in node and "examples" not in out:
            out["examples"] = [node["example"]]
        if "properties" in out and isinstance(out.get("required"), list):
            props = node.get("properties", {})
            out["required"] = [
                r
                for r in out["required"]
                if r in out["properties"]
                or not self.shared.flagged(props.get(r), at.join("properties", r), hidden)
            ]
        if node.get("nullable") is True:
            out = self._nullable(out, at)
        if "default" in out and not _fits(out["default"], out.get("type")):
            note = (
                f"{at}: default {out.pop('default')!r} is not of its type {out['type']}: left out"
            )
            if note not in self.shared.notes:
                self.shared.notes.append(note)
        return out

    def _steering(self, at: At) -> None:
        keyword = at.pointer.rpartition("/")[2]
        note = (
            f"{at}: {unescape(keyword)!r} left out: it would name Python code for the generated "
            "package to import (a keyword of datamodel-code-generator), and a document's schema "
            "is data"
        )
        if note not in self.shared.notes:
            self.shared.notes.append(note)

    def _nullable(self, out: dict[str, Any], at: At) -> dict[str, Any]:
        if not set(out) - ANNOTATIONS:
            return out  # any value already, null included
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list):
            if "null" not in kind:
                out["type"] = [*kind, "null"]
        else:
            notes: dict[str, Any] = {
                k: out.pop(k) for k in ("description", "title", "default") if k in out
            }
            wrapped: dict[str, Any] = {"anyOf": [out, {"type": "null"}], **notes}
            self.origin[id(wrapped)] = at
            return wrapped
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out

    def check(self, schema: Any, *, loops: bool = True) -> None:
        """Skip (TN453, where its part came from) when the converted schema is not valid JSON
        Schema; also (`loops`) when a shared schema it reaches loops onto itself (TN451)."""
        if loops:
            self.shared.check_loops(schema)
        for error in self.shared.meta.errors(schema):
            node: Any = schema
            where = self.origin.get(id(schema))
            for part in error.path:
                try:
                    node = node[part]
                except (KeyError, IndexError, TypeError):
                    break
                where = self.origin.get(id(node), where)
            keyword = str(error.path[-1]) if error.path else "schema"
            raise Skip(
                "TN453",
                f"{keyword}: not valid JSON Schema once converted: {error.message}",
                where or At(self.shared.files.root, ""),
            )

    def kinds(self, schema: Any) -> set[str]:
        schema = self.shared.resolve(schema)
        if not isinstance(schema, dict):
            return set()
        memo = self.shared.kinds
        if id(schema) not in memo:
            memo[id(schema)] = (schema, frozenset())  # a loop back here says nothing
            memo[id(schema)] = (schema, frozenset(self._kinds(schema)))
        return set(memo[id(schema)][1])

    def _kinds(self, schema: dict[str, Any]) -> set[str]:
        kind = schema.get("type")
        if isinstance(kind, str):
            return {kind}
        if isinstance(kind, list):
            return set(kind)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            names = {bool: "boolean", int: "integer", float: "number", str: "string"}
            return {names.get(type(v), "other") for v in schema["enum"]}
        for keyword in ("anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list) and schema[keyword]:
                found: set[str] = set()
                for branch in schema[keyword]:
                    more = self.kinds(branch)
                    if not more:
                        return set()
                    found |= more
                return found
        return set()

    def plain_object(self, schema: Any) -> tuple[dict[str, Any], list[str], bool] | None:
        """(properties, required, closed) of a body that can become arguments, else None."""
        schema = self.shared.resolve(schema)
        if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
            return None
        if schema.get("type", "object") != "object" or not schema["properties"]:
            return None
        if any(
            k in schema
            for k in ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties")
        ):
            return None
        extra = schema.get("additionalProperties")
        if extra not in (None, False):
            return None
        required = [r for r in schema.get("required", []) if r in schema["properties"]]
        return dict(schema["properties"]), required, extra is False

    def object_root(self, raw: Any, at: At) -> dict[str, Any] | None:
        """An output schema whose root says `type: object` (MCP's rule), or None when the
        response is not an object. A root that is only a $ref takes its target's keywords."""
        schema = self.convert(raw, at)
        root = schema
        if (
            isinstance(schema, dict)
            and "$ref" in schema
            and set(schema) <= {"$ref", "description", "title"}
        ):
            root = self.shared.resolve(schema)
            if isinstance(root, dict):
                root = {**root, **{k: v for k, v in schema.items() if k != "$ref"}}
        if not isinstance(root, dict):
            return None
        kind = root.get("type")
        if kind == "object":
            return root
        if kind is None and ("properties" in root or self._all_objects(root.get("allOf"))):
            return {"type": "object", **root}
        return None

    def never_object(self, schema: Any, depth: int = 0) -> bool:
        """Whether a converted schema's root names its types, none of them object (an array,
        a string, a nullable list): such a result is wrapped, never confused with an object."""
        root = self.shared.resolve(schema) if isinstance(schema, dict) else schema
        if not isinstance(root, dict) or depth > 8:  # a loop of anyOf refs says nothing
            return False
        kinds = root.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if isinstance(root.get("anyOf"), list) and kinds is None:
            # nullable (anyOf [X, null]): each branch never an object
            return all(self.never_object(branch, depth + 1) for branch in root["anyOf"])
        return isinstance(kinds, list) and bool(kinds) and "object" not in kinds

    def _all_objects(self, branches: Any) -> bool:
        if not isinstance(branches, list) or not branches:
            return False
        for branch in branches:
            resolved = self.shared.resolve(branch)
            if not isinstance(resolved, dict):
                return False
            memo = self.shared.objects
            if id(resolved) not in memo:
                memo[id(resolved)] = (resolved, False)  # a loop says nothing
                memo[id(resolved)] = (
                    resolved,
                    resolved.get("type") == "object"
                    or "properties" in resolved
                    or self._all_objects(resolved.get("allOf")),
                )
            if not memo[id(resolved)][1]:
                return False
        return True


JSON_TYPES: dict[type, set[str]] = {
    type(None): {"null"},
    bool: {"boolean"},
    str: {"string"},
    list: {"array"},
    dict: {"object"},
    float: {"number"},
}


def _fits(value: Any, kind: Any) -> bool:
    """Whether a value is of the type a `type` keyword names (a name or a list; none: any)."""
    kinds = {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else set()
    if not kinds:
        return True
    if isinstance(value, float) and value.is_integer() or type(value) is int:
        found = {"integer", "number"}
    else:
        found = JSON_TYPES.get(type(value), set())
    return bool(found & kinds)


def _exclusive(out: dict[str, Any], key: str, bound: str) -> None:
    """OpenAPI 3.0's boolean exclusiveMinimum/Maximum as JSON Schema's numeric one."""
    if out.get(key) is True and bound in out:
        out[key] = out.pop(bound)
    else:
        out.pop(key, None)
