"""Stage 2a: turn each parsed document into a Tool, or into located diagnostics.

Checks the spec envelope (against the JSON Schema the package ships), each schema against the
draft 2020-12 meta-schema and each example against its input schema; `cross_tool` checks names
across all files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Document, Tool
from toolnexus_gen.memo import Memo
from toolnexus_gen.targets.registry import NAMES
from toolnexus_gen.toolspec.cross import cross_tool as cross_tool  # names across specs
from toolnexus_gen.toolspec.http import http_binding
from toolnexus_gen.toolspec.load import Loader, LoadError
from toolnexus_gen.toolspec.metaschema import MetaCheck
from toolnexus_gen.toolspec.naming import python_names
from toolnexus_gen.toolspec.pointer import join_pointer
from toolnexus_gen.toolspec.pointer import resolve as resolve_pointer
from toolnexus_gen.toolspec.refs import (
    SpecRegistry,
    base_problems,
    document_uri,
    iter_refs,
    ref_closure,
    ref_problem,
)

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from toolnexus_gen.toolspec.metaschema import MetaCheck

# jsonschema (and referencing under it) is imported on first use: a build that checks no
# schema afresh, and spec keys whose schemas are plain (`_plainly_valid`: an edit of a
# description), never needs it.

ENVELOPE_KEYS_NOTE = "keys starting with x- are ignored"
_JSON_TYPES = "array, boolean, integer, null, number, object, string"


@cache
def envelope_schema() -> dict[str, Any]:
    text = (Path(__file__).parent.parent / "spec.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _envelope_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(envelope_schema())


@cache
def _meta() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


# Keys of a bare JSON Schema spec that describe the file or the tool, not the arguments: the
# examples become the tool's examples, and `$schema`/`$id` name the file's dialect and address.
BARE_TOOL_KEYS = ("$schema", "$id", "examples")


def bare_input_schema(data: dict[str, Any]) -> dict[str, Any]:
    """A bare JSON Schema spec's input schema as emitted: without its file and tool keys."""
    return {key: value for key, value in data.items() if key not in BARE_TOOL_KEYS}


def is_bare_schema(data: dict[str, Any]) -> bool:
    return "input_schema" not in data and ("type" in data or "properties" in data or "$ref" in data)


def root_type(schema: dict[str, Any]) -> Any:
    """The root's type; a root that is only a local `$ref` (as zod writes schemas) has the type
    of what it points to."""
    if "type" not in schema and isinstance(schema.get("$ref"), str):
        target = resolve_pointer(schema, unquote(schema["$ref"].removeprefix("#")), None)
        if schema["$ref"].startswith("#") and isinstance(target, dict):
            return target.get("type")
    return schema.get("type")


# Keywords that say something about values other than objects, or combine schemas: a root that
# holds any of them is not taken as an object root by profile = "reach".
NOT_OBJECT_ONLY = frozenset(
    {"type", "enum", "const", "$ref", "$dynamicRef", "anyOf", "oneOf", "allOf", "not", "if"}
    | {"then", "else", "items", "prefixItems", "contains", "minItems", "maxItems", "uniqueItems"}
    | {"minContains", "maxContains", "unevaluatedItems", "minLength", "maxLength", "pattern"}
    | {"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    | {"contentEncoding", "contentMediaType", "contentSchema"}
)
OBJECT_KEYWORDS = frozenset(
    {"properties", "required", "additionalProperties", "patternProperties", "propertyNames"}
    | {"minProperties", "maxProperties", "dependentRequired", "dependentSchemas"}
    | {"unevaluatedProperties"}
)


def open_root(schema: dict[str, Any]) -> dict[str, Any] | None:
    """profile = "reach": a root without a type that says nothing but object keywords and
    annotations (`{"$schema": "..."}` alone takes any arguments) as an object root, open when it
    names no properties; arguments are always an object, so no call changes meaning. None when
    the root is not such a root."""
    kind = schema.get("type")
    if isinstance(kind, list) and "object" in kind and "$ref" not in schema:
        return {**schema, "type": "object"}
    if NOT_OBJECT_ONLY & set(schema):
        return None
    opened = {**schema, "type": "object"}
    if not OBJECT_KEYWORDS & set(schema):
        opened["additionalProperties"] = True
    return opened


class _Collector:
    def __init__(self, document: Document) -> None:
        self.document = document
        self.diagnostics: list[Diagnostic] = []

    def add(
        self,
        code: str,
        message: str,
        pointer: str | None,
        *,
        key: bool = False,
        show_pointer: bool = True,
        severity: Severity = Severity.ERROR,
    ) -> None:
        positions = self.document.positions
        line, col = positions.key(pointer or "") if key else positions.value(pointer or "")
        self.diagnostics.append(
            Diagnostic(
                self.document.display,
                line,
                col,
                code,
                message,
                severity,
                pointer if show_pointer else None,
            )
        )


class Validator:
    """Validates spec documents one at a time (each on its own; names across specs are checked
    by cross_tool). With a memo, schemas already found valid (same schema, examples and
    referenced files) are not validated again.
    """

    def __init__(
        self,
        specs_dir: Path,
        targets: Sequence[str],
        memo: Memo,
        load: Loader,
        base_url: str | None = None,
        *,
        reach: bool = False,
    ) -> None:
        self.specs_dir = specs_dir
        self.targets = targets
        self.reach = reach  # profile = "reach": a root without a type is an object root
        self.registry = SpecRegistry(specs_dir)
        self.checks = _Checks(memo, specs_dir, load)
        self.base_url = base_url  # what relative `http` URLs are appended to

    @property
    def passed(self) -> tuple[str, ...]:
        """The memo keys of the checks the last document passed."""
        return tuple(self.checks.passed)

    def document(self, document: Document) -> tuple[Tool | None, list[Diagnostic]]:
        """The document's tool (None when it has an error) and its diagnostics (`passed`: the
        memo keys of the checks it passed)."""
        self.checks.passed = []
        return _validate_document(
            document,
            self.specs_dir,
            self.registry,
            self.targets,
            self.checks,
            self.base_url,
            self.reach,
        )


def _validate_document(
    document: Document,
    specs_dir: Path,
    registry: SpecRegistry,
    targets: Sequence[str],
    checks: _Checks,
    base_url: str | None,
    reach: bool,
) -> tuple[Tool | None, list[Diagnostic]]:
    out = _Collector(document)
    data = document.data
    if not isinstance(data, dict):
        out.add(
            "TN107",
            f"a spec must be a mapping (an object), not {_json_type(data)}",
            "",
            show_pointer=False,
        )
        return None, out.diagnostics

    stem = document.path.stem
    if is_bare_schema(data):
        envelope: dict[str, Any] = {"name": stem, "input_schema": bare_input_schema(data)}
        if "description" in data:
            envelope["description"] = data["description"]
        if "examples" in data:
            envelope["examples"] = data["examples"]
        schema_pointer = ""
        if not isinstance(data.get("description"), str) or not data["description"].strip():
            out.add(
                "TN110",
                'a bare JSON Schema spec needs a non-empty top-level "description" (it describes the tool)',
                "/description" if "description" in data else "",
                key="description" not in data,
                show_pointer=False,
            )
            return None, out.diagnostics
    else:
        envelope = data
        schema_pointer = "/input_schema"
        _check_envelope(envelope, out)
        if out.diagnostics:
            return None, out.diagnostics

    name = envelope.get("name", stem)
    if name != stem:
        out.add(
            "TN111",
            f"name {name!r} must equal the file stem {stem!r} (rename the file or the tool)",
            "/name",
        )
    elif not TOOL_NAME.fullmatch(stem):
        out.add(
            "TN111",
            f"the file name gives the tool name {stem!r}, which is not a tool name: use ASCII "
            "letters, digits, _ . : and - (at most 128), and rename the file",
            "",
            show_pointer=False,
        )

    input_schema = envelope.get("input_schema")
    output_schema = envelope.get("output_schema")
    notes = _Collector(document)  # warnings, reported when the spec is valid
    profile = envelope.get("profile")
    reach = reach or profile == "reach"
    if reach and isinstance(input_schema, dict) and root_type(input_schema) != "object":
        opened = open_root(input_schema)
        if opened is not None:
            kind = input_schema.get("type")
            was = f"type {kind!r}" if kind is not None else "no type (it takes any value)"
            now = "an object root"
            if "additionalProperties" in opened and "additionalProperties" not in input_schema:
                now = "an open object root (additionalProperties: true)"
            notes.add(
                "TN224",
                f'input_schema root has {was}: profile = "reach" sends it as {now}; arguments '
                "are always an object, so no call changes meaning",
                schema_pointer,
                severity=Severity.WARNING,
            )
            input_schema = opened
    if input_schema is not None:
        checks.schema(input_schema, schema_pointer, out, root_object=True)
        _check_refs(input_schema, schema_pointer, document, specs_dir, out, checks.load)
    if output_schema is not None:
        checks.schema(output_schema, "/output_schema", out, root_object=False)
        _check_refs(output_schema, "/output_schema", document, specs_dir, out, checks.load)

    examples = envelope.get("examples", [])
    if isinstance(examples, list) and not out.diagnostics:
        checks.examples(examples, "/examples", input_schema, document, registry, out)

    binding = _binding(envelope, document, registry, base_url, out)
    selected = _target_selection(envelope.get("targets"), targets, out)
    if out.diagnostics:
        return None, out.diagnostics
    tool = Tool(
        name=name,
        description=envelope["description"],
        input_schema=input_schema,
        python=python_names(name),
        source=document,
        title=envelope.get("title"),
        output_schema=output_schema,
        examples=tuple(examples),
        strict=envelope.get("strict"),
        annotations=envelope.get("annotations"),
        deprecated=envelope.get("deprecated") or None,
        targets=selected,
        binding=binding,
        groups=tuple(envelope.get("groups", ())),
        defer_loading=bool(envelope.get("defer_loading", False)),
        profile=profile,
        schema_pointer=schema_pointer,
    )
    return tool, out.diagnostics + notes.diagnostics


def _binding(
    envelope: dict[str, Any],
    document: Document,
    registry: SpecRegistry,
    base_url: str | None,
    out: _Collector,
) -> dict[str, Any] | None:
    """How the tool runs when it is not a handler method ({kind: settings}): from its `source`,
    or its `http` key (checked by spec.http)."""
    source, http = envelope.get("source"), envelope.get("http")
    if source and http is not None:
        out.add(
            "TN440",
            "a spec has either a source or an http binding, not both",
            "/http",
            key=True,
            show_pointer=False,
        )
        return None
    if http is not None:
        schema = envelope.get("input_schema")
        resolver = registry.with_schema(document, schema if isinstance(schema, dict) else {})
        found = http_binding(
            http,
            schema,
            resolver.resolver(base_uri=document_uri(document.path)),
            base_url,
            lambda code, message, pointer: out.add(code, message, pointer),
        )
        return None if found is None else {"http": found}
    return dict(source) if source else None


TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")  # as spec.schema.json says for `name`


def _check_envelope(envelope: dict[str, Any], out: _Collector) -> None:
    known = envelope_schema()["properties"]
    for key in envelope:
        if key not in known and not key.startswith("x-"):
            hint = _did_you_mean(key, known)
            out.add(
                "TN108",
                f"unknown key {key!r}{hint}; {ENVELOPE_KEYS_NOTE}",
                join_pointer("", key),
                key=True,
                show_pointer=False,
            )
    if "description" not in envelope:
        out.add(
            "TN110",
            'missing required key "description" (what the tool does, for the model)',
            "",
            show_pointer=False,
        )
    if not out.diagnostics and _plainly_valid(envelope):
        return  # what jsonschema would find: nothing
    for error in _envelope_validator().iter_errors(envelope):
        pointer = "".join(f"/{join_pointer('', p)[1:]}" for p in error.absolute_path)
        if error.validator in ("additionalProperties", "required") and not error.absolute_path:
            continue  # reported above, with better words
        if error.absolute_path and error.absolute_path[0] == "description":
            out.add("TN110", "description must be a non-empty string", pointer, show_pointer=False)
            continue
        out.add("TN109", f"{_field(pointer)}: {error.message}", pointer)


# The keywords a spec key's schema may use for `_plainly` to decide it, and the JSON types as
# jsonschema tells them (a bool is no integer there, but these four never mix).
_PLAIN_TYPES = {"string": str, "object": dict, "array": list, "boolean": bool}
_TOP_KEYWORDS = {"$schema", "$id", "title", "description", "type", "properties"}


@cache
def _plain_top() -> bool:
    """Whether the envelope schema relates no key to another, so that an envelope without an
    unknown key (TN108) and with its description (TN110) is valid when each value is valid
    against its key's schema."""
    schema = envelope_schema()
    return (
        set(schema)
        <= _TOP_KEYWORDS | {"patternProperties", "additionalProperties", "required", "$defs"}
        and schema.get("type") == "object"
        and schema.get("patternProperties") == {"^x-": True}
        and schema.get("additionalProperties") is False
        and schema.get("required") == ["description"]
    )


def _plainly_valid(envelope: dict[str, Any]) -> bool:
    """True when jsonschema would find nothing wrong with an envelope that has no unknown key
    and has its description, told without it for keys whose schemas use only a few plain
    keywords (`_plainly`): a build that checks an edited description then never imports
    jsonschema. False means only that jsonschema is asked (for its answer and diagnostics)."""
    if not _plain_top():
        return False
    known = envelope_schema()["properties"]
    return all(_plainly(known[key], value) for key, value in envelope.items() if key in known)


def _plainly(schema: Any, value: Any) -> bool:
    """Whether `value` is valid against `schema`, as jsonschema's keywords say (pattern and the
    lengths apply to strings only, `items` to every item of an array, `properties` to the
    properties an object has), for a schema of only these keywords; False for any other keyword
    (undecided here)."""
    if not isinstance(schema, dict):
        return schema is True
    for keyword, want in schema.items():
        if keyword == "description":
            continue
        if keyword == "type":
            kind = _PLAIN_TYPES.get(want) if isinstance(want, str) else None
            if kind is None or not isinstance(value, kind):
                return False
        elif keyword == "pattern" and isinstance(want, str):
            if isinstance(value, str) and re.search(want, value) is None:
                return False
        elif keyword in ("minLength", "maxLength") and type(want) is int:
            if isinstance(value, str) and (
                len(value) < want if keyword == "minLength" else len(value) > want
            ):
                return False
        elif keyword == "items":
            if isinstance(value, list) and not all(_plainly(want, item) for item in value):
                return False
        elif keyword == "properties" and isinstance(want, dict):
            if isinstance(value, dict) and not all(
                _plainly(want[key], item) for key, item in value.items() if key in want
            ):
                return False
        else:
            return False
    return True


class _Checks:
    """The expensive checks (meta-schema, examples), skipped when the memo knows them valid."""

    def __init__(self, memo: Memo, specs_dir: Path, load: Loader) -> None:
        self.memo = memo
        self.specs_dir = specs_dir
        self.load = load  # referenced files, read once for every tool that reaches them
        self.passed: list[str] = []  # the memo keys of the checks the document passed
        self.meta = MetaCheck()  # a schema object many specs share is checked once

    def schema_key(self, schema: Any, root_object: bool) -> str:
        return self.memo.key("schema", schema, root_object)

    def examples_key(self, examples: Any, schema: Any, document: Document) -> str:
        closure = ref_closure(schema, document.path, self.specs_dir, self.load)
        return self.memo.key("examples", examples, schema, document.path.name, closure)

    def schema(self, schema: Any, pointer: str, out: _Collector, *, root_object: bool) -> None:
        key = self.schema_key(schema, root_object)
        if self.memo.is_valid(key):
            self.passed.append(key)
            return
        before = len(out.diagnostics)
        _check_schema(schema, pointer, out, self.meta, root_object=root_object)
        if len(out.diagnostics) == before:
            self.memo.mark_valid(key)
            self.passed.append(key)

    def examples(
        self,
        examples: list[Any],
        pointer: str,
        schema: Any,
        document: Document,
        registry: SpecRegistry,
        out: _Collector,
    ) -> None:
        if not examples:
            return
        key = self.examples_key(examples, schema, document)
        if self.memo.is_valid(key):
            self.passed.append(key)
            return
        before = len(out.diagnostics)
        _check_examples(examples, pointer, schema, document, registry, out)
        if len(out.diagnostics) == before:
            self.memo.mark_valid(key)
            self.passed.append(key)


def _check_schema(
    schema: Any, pointer: str, out: _Collector, meta: MetaCheck, *, root_object: bool
) -> None:
    label = "input_schema" if root_object else "output_schema"
    errors = []
    if next(meta.errors(schema), None) is not None:  # the full meta-schema's words, in its order
        errors = sorted(_meta().iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    for error in errors:
        where = pointer + "".join(join_pointer("", p) for p in error.absolute_path)
        message = error.message
        if error.absolute_path and error.absolute_path[-1] == "type":
            message = f"{error.instance!r} is not a JSON Schema type (use one of {_JSON_TYPES})"
        out.add("TN112", f"{label} is not valid JSON Schema (draft 2020-12): {message}", where)
    if errors or not root_object:
        return
    if root_type(schema) != "object":
        got = f"type {schema['type']!r}" if "type" in schema else "no type"
        if "type" not in schema and "$ref" in schema:
            got = (
                f"a $ref to {'no object' if root_type(schema) is None else repr(root_type(schema))}"
            )
        if open_root(schema) is not None:
            got += ' (profile = "reach" sends such a root as an object root)'
        out.add(
            "TN113",
            f"the root of input_schema must be an object schema (type: object), found {got}",
            f"{pointer}/type" if "type" in schema else pointer,
        )


def _check_refs(
    schema: Any, pointer: str, document: Document, specs_dir: Path, out: _Collector, load: Loader
) -> None:
    for where, ref in iter_refs(schema, pointer):
        problem = ref_problem(ref, document.path, specs_dir)
        if problem:
            out.add("TN120", problem, where)
        elif urlsplit(ref).path:  # a file it names that does not parse: its own error, there
            try:
                load(document.path.parent / unquote(urlsplit(ref).path))
            except LoadError as exc:
                if exc.diagnostic not in out.diagnostics:
                    out.diagnostics.append(exc.diagnostic)
    for where, problem in base_problems(schema, pointer):
        out.add("TN120", problem, where)


def _check_examples(
    examples: list[Any],
    pointer: str,
    schema: dict[str, Any] | None,
    document: Document,
    registry: SpecRegistry,
    out: _Collector,
) -> None:
    if schema is None:
        schema = {"type": "object", "properties": {}, "additionalProperties": False}
    import referencing.exceptions
    from jsonschema import Draft202012Validator

    reg = registry.with_schema(document, schema)
    validator = Draft202012Validator({"$ref": document_uri(document.path)}, registry=reg)
    for index, example in enumerate(examples):
        try:
            errors = sorted(
                validator.iter_errors(example), key=lambda e: list(map(str, e.absolute_path))
            )
        except referencing.exceptions.Unresolvable as exc:  # jsonschema wraps it, keeping the class
            out.add(
                "TN120",
                f"cannot resolve a $ref while checking examples: {exc}",
                join_pointer(pointer, index),
            )
            return
        except RecursionError:
            out.add(
                "TN120",
                f"example {index} cannot be checked: the schema's $refs loop without end",
                join_pointer(pointer, index),
            )
            return
        for error in errors:
            where = join_pointer(pointer, index) + "".join(
                join_pointer("", p) for p in error.absolute_path
            )
            field = "/".join(map(str, error.absolute_path)) or "(the example)"
            out.add(
                "TN114",
                f"example {index} does not match input_schema: {field}: {error.message}",
                where,
            )


def _target_selection(
    selection: dict[str, Any] | None, targets: Sequence[str], out: _Collector
) -> frozenset[str] | None:
    if selection is None:
        return None
    for key in ("only", "exclude"):
        for i, name in enumerate(selection.get(key, [])):
            if name not in NAMES:
                out.add(
                    "TN117",
                    f"unknown target {name!r} (known: {', '.join(NAMES)})",
                    f"/targets/{key}/{i}",
                )
    chosen = set(selection.get("only", NAMES)) - set(selection.get("exclude", []))
    return frozenset(chosen)


def _did_you_mean(key: str, known: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _field(pointer: str) -> str:
    return pointer.lstrip("/") or "spec"


def _json_type(value: Any) -> str:
    return {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)
