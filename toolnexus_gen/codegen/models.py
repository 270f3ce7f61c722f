"""Typed argument models, one module per tool, made by datamodel-code-generator.

Each tool is generated on its own, so a tool's class names never depend on which other tools
exist. Tools whose argument schemas are the same (Microsoft Graph's 11,000 operations hold 6,500
different ones) are generated once: the others take that source with the root class renamed,
where the name appears nowhere else and the class line still fits (`renamed`), which is then
the very text the generator gives for that name. The formatter is chosen explicitly (the built-in one, double quotes) so generation needs
neither black nor isort; fields it lays out as black does are laid out as `ruff format` does
(`ruff_layout`).
"""

from __future__ import annotations

import json
import keyword
import os
import re
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolnexus_gen.config.options import Header
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError
from toolnexus_gen.ir import ModelJob, Tool
from toolnexus_gen.memo import Memo, canonical, sha
from toolnexus_gen.parallel import Stream, pooled
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.toolspec.bundle import ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS
from toolnexus_gen.toolspec.formats import PATTERN_FORMATS, takes_pattern

# Below this many models made at once, their files are not staged while the workers make them:
# what it saves is less than a second scan of the output folder costs.
STAGED_MIN = 32
LINE_LENGTH = 88  # ruff's default (ruff format --isolated): generated code is stable under it

# Formats pydantic turns into something else than the string sent (AnyUrl, datetime, UUID, ...).
# pydantic does not validate a default, so a property with a string default would hold the raw
# str when left out (and mypy refuses `url: AnyUrl = "https://..."`): such a property is a str,
# as its default is.
NOT_STR_FORMATS = frozenset(
    {"uri", "ipv4", "ipv6", "uuid", "date", "time", "date-time", "duration", "binary"}
    | {"password", "decimal", "path"}
)


def _options(header: str, class_name: str) -> dict[str, Any]:
    from datamodel_code_generator import DataModelType, Formatter, InputFileType, PythonVersion
    from datamodel_code_generator.enums import StrictTypes

    return {
        "input_file_type": InputFileType.JsonSchema,
        "output_model_type": DataModelType.PydanticV2BaseModel,
        "target_python_version": PythonVersion.PY_310,
        "formatters": [Formatter.BUILTIN],
        "builtin_format_line_length": LINE_LENGTH,
        "use_double_quotes": True,
        "disable_timestamp": True,
        "custom_file_header": header,
        "class_name": class_name,
        "use_standard_collections": True,
        "use_union_operator": True,
        "set_default_enum_member": True,
        "field_constraints": True,
        # As strict as the schema: a default does not make a property nullable, a string is not
        # a number and a number not a boolean (pydantic's lax mode would take "5" or 1).
        "strict_nullable": True,
        "strict_types": [StrictTypes.str, StrictTypes.int, StrictTypes.float, StrictTypes.bool],
        # A property's default belongs to its field, not to the root model made from one of its
        # anyOf/oneOf branches (`stop: {default: null, oneOf: [string, array]}` would give the
        # list's root model the default None, which mypy refuses).
        "keep_field_defaults_off_branch_roots": True,
        # Descriptions stay in Field(description=...), so model_json_schema() carries them.
        "use_field_description": False,
        "use_schema_description": False,
        "allow_remote_refs": False,
        # The formatter reads the pyproject.toml nearest this folder: "/" rather than the working
        # folder, so a model never depends on where the build runs.
        "settings_path": Path(os.sep),
        "type_mappings": [f"{name}=string" for name in PATTERN_FORMATS],
    }


def model_job(tool: Tool) -> ModelJob:
    return ModelJob(
        _model_schema(tool),
        tool.python.model,
        tool.python.module,
        tool.source.display,
        tool.source.positions.value(tool.schema_pointer),
        tool.schema_pointer,
    )


def model_key(memo: Memo, job: ModelJob, header: Header) -> str:
    """The memo key of a model's source: its schema, class name and the header it carries."""
    return memo.key("model", job.schema, job.class_name, header.specs_rel, header.command)


class Models:
    """The build's argument models, by memo key: from the memo, or made by
    datamodel-code-generator on the workers, each started as soon as its unit is made
    (`start`), so they are made while this process checks and encodes the other specs."""

    def __init__(self, memo: Memo, header: Callable[[], str]) -> None:
        self.memo = memo
        self.header = header  # the text on top of every model module
        self._text: str | None = None
        self.started: dict[str, ModelJob] = {}
        # a model whose schema another started model has: its key -> (its job, that one's key)
        self.twins: dict[str, tuple[ModelJob, str]] = {}
        self._shapes: dict[str, str] = {}  # digest of a started model's schema -> its key
        self.stream: Stream[tuple[dict[str, Any], str, str], tuple[bool, str]] = Stream(make_model)

    @property
    def awaited(self) -> bool:
        """Whether models are being made on the workers: the build will wait for them."""
        return bool(self.started) and pooled()

    def start(self, key: str, job: ModelJob) -> None:
        if key in self.memo.models or key in self.started or key in self.twins:
            return
        shape = sha(canonical(job.schema))
        first = self._shapes.get(shape)
        if first is not None:
            self.twins[key] = (job, first)
            return
        self._shapes[shape] = key
        if self._text is None:
            self._text = self.header()
        self.started[key] = job
        self.stream.add((job.schema, job.class_name, self._text))

    def sources(
        self,
        keys: Sequence[str],
        jobs: Sequence[ModelJob | None],
        progress: Progress = unseen,
        made: Callable[[ModelJob, str], None] | None = None,
    ) -> list[str]:
        """Each model module's source. A job is needed for each key the memo does not hold. A
        schema the generator cannot handle is a located error (DiagnosticsError), never a
        traceback. `made(job, source)` hears of each model the workers make, as it comes, when
        there are many (a cold build stages their files meanwhile: fs.output.Staging)."""
        for key, job in zip(keys, jobs, strict=True):
            if self.memo.model(key) is not None:
                continue
            if job is None:  # the build cache reuses a unit only while the memo holds its model
                raise AssertionError(f"model {key} is neither in the memo nor to be made")
            self.start(key, job)
        told = lambda done, total: progress("models", done, total)  # noqa: E731
        each: Callable[[int, tuple[bool, str]], None] | None = None
        if made is not None and len(self.started) >= STAGED_MIN:
            tell, started = made, list(self.started.values())

            def each(index: int, result: tuple[bool, str]) -> None:
                if result[0]:
                    tell(started[index], result[1])

        results = self.stream.results(told, each) if self.started else []
        finished = list(zip(self.started.items(), results, strict=True))
        why_not = {key: why for (key, _), (ok, why) in finished if not ok}
        failed = [
            _failure(job, why_not[key]) for key, job in self.started.items() if key in why_not
        ]
        failed += [
            _failure(job, why_not[first]) for job, first in self.twins.values() if first in why_not
        ]
        if failed:
            raise DiagnosticsError(failed)
        for (key, _job), (_ok, source) in finished:
            self.memo.store_model(key, source)  # compiled as it was made
        for key, (job, first) in self.twins.items():
            twin = renamed(self.memo.models[first], self.started[first].class_name, job.class_name)
            if twin is None:  # the name is elsewhere in it, or the line would not fit
                ok, twin = make_model((job.schema, job.class_name, self._text or ""))
                if not ok:
                    raise DiagnosticsError([_failure(job, twin)])
            else:
                compile(twin, f"models/{job.module}.py", "exec")  # never store a bad one
            self.memo.store_model(key, twin)
        return [self.memo.models[key] for key in keys]


def renamed(source: str, old: str, new: str) -> str | None:
    """A model's source with its root class `old` named `new`: the text the generator gives
    for `new`, when `old` appears only in the class line, `new` nowhere, and the class line
    still fits (a longer name may be split over lines); else None."""
    line = f"class {old}("
    if source.count(old) != 1 or line not in source or new in source:
        return None
    out = source.replace(line, f"class {new}(")
    row = next(text for text in out.splitlines() if text.startswith(f"class {new}("))
    return out if _width(row) <= LINE_LENGTH else None


def warm_up() -> None:
    """Import datamodel-code-generator and make one model: a worker's first job is then fast."""
    _source({"type": "object", "properties": {"a": {"type": "string"}}}, "Warm", "# warm")


def make_model(job: tuple[dict[str, Any], str, str]) -> tuple[bool, str]:
    """(True, source), compiled (never store a bad one: done here, on the workers, rather than
    in the build's last step), or (False, why) when datamodel-code-generator refuses the
    schema."""
    schema, class_name, header = job
    try:
        source = _source(schema, class_name, header).rstrip("\n") + "\n"
        compile(source, f"<model {class_name}>", "exec")
    except Exception as exc:  # noqa: BLE001 (its errors become located diagnostics)
        return False, f"{type(exc).__name__}: {exc}"
    return True, source


def _failure(job: ModelJob, message: str) -> Diagnostic:
    return Diagnostic(
        job.display,
        *job.place,
        "TN119",
        f"datamodel-code-generator cannot make the argument model from this schema: {message}",
        pointer=job.pointer,
    )


def _source(schema: dict[str, Any], class_name: str, header: str) -> str:
    from datamodel_code_generator import generate

    options = _options(header, class_name)
    aliases = _normalising_names(schema)
    if aliases:
        options["aliases"] = aliases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = generate(schema, **options)
    assert isinstance(source, str)
    return ruff_layout(source)


# The built-in formatter follows black: a value whose first line does not fit is put in
# parentheses and split inside them (`x: LongEnum = (\n    Field(\n ...)\n)`). ruff format does
# that only where it helps: with a plain name for annotation, only when every line then fits;
# otherwise it splits the value's own brackets and lets the first line run long
# (`x: LongEnum = Field(`). An annotation ruff could split itself (`X | None`, `list[X]`) keeps
# the parentheses, as ruff keeps them.
_WRAPPED = re.compile(
    r"^(?P<indent> *)(?P<head>\S[^\n]*) = \(\n"
    r"(?P=indent)    (?P<first>\S[^\n]*[(\[{])\n"
    r"(?P<body>(?:(?P=indent)        [^\n]*\n)*?)"
    r"(?P=indent)    (?P<close>[)\]}])\n"
    r"(?P=indent)\)\n",
    re.M,
)
_PLAIN_NAME = re.compile(r"[A-Za-z_][\w.]*")


def ruff_layout(source: str) -> str:
    """`source` with each value black wrapped in parentheses laid out as ruff format lays it
    out; unchanged unless the result is the same program (checked on its syntax tree)."""
    if " = (\n" not in source:
        return source

    def unwrap(match: re.Match[str]) -> str:
        target, _, annotation = match["head"].partition(":")
        plain = not annotation or _PLAIN_NAME.fullmatch(annotation.strip())
        if not plain or all(_width(line) <= LINE_LENGTH for line in match[0].splitlines()):
            return match[0]
        indent = match["indent"]
        body = "".join(line[4:] + "\n" for line in match["body"].splitlines())
        return f"{indent}{match['head']} = {match['first']}\n{body}{indent}{match['close']}\n"

    text = source if source.endswith("\n") else source + "\n"  # the last line's too
    laid_out = _WRAPPED.sub(unwrap, text)
    if laid_out == text:
        return source
    import ast

    same = ast.dump(ast.parse(laid_out)) == ast.dump(ast.parse(source))
    return laid_out if same else source


def _width(line: str) -> int:
    """A line's width as ruff counts it: wide East Asian characters take two columns."""
    if line.isascii():
        return len(line)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _property_names(node: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            names |= set(properties)
        for value in node.values():
            names |= _property_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= _property_names(value)
    return names


def _dmcg_name(name: str) -> str:
    """The field name datamodel-code-generator derives from a property name (before numbering)."""
    field = re.sub(r"\W", "_", name)
    if not field or field[0] == "_" or field[0].isdigit():
        field = f"field{field}" if field.startswith("_") else f"field_{field}"
    return f"{field}_" if keyword.iskeyword(field) else field


def _normalising_names(schema: Any) -> dict[str, str]:
    """Field names for properties that Python would silently change.

    Python reads identifiers in NFKC form, so a field written `ﬀ` is the field `ff`, and the
    property `ﬀ` would never reach it. Such properties get an explicit field name (and so an
    alias to their real name), chosen not to clash with the names the generator gives the others.
    """
    names = _property_names(schema)
    changing = [name for name in sorted(names) if unicodedata.normalize("NFKC", name) != name]
    if not changing:
        return {}
    taken = {_dmcg_name(name) for name in names if name not in changing} | names
    aliases: dict[str, str] = {}
    for name in changing:
        field = _dmcg_name(unicodedata.normalize("NFKC", name))
        while field in taken:
            field += "_"
        taken.add(field)
        aliases[name] = field
    return aliases


def _model_schema(tool: Tool) -> dict[str, Any]:
    if tool.input_schema is None:  # as every provider file says: no arguments at all
        return {"type": "object", "properties": {}, "additionalProperties": False}
    # The tool's description belongs to the tool, not the model; titles would rename classes.
    schema: dict[str, Any] = _formats(tool.input_schema)
    for key in ("title", "description", "examples", "$id"):
        schema.pop(key, None)
    return schema


def _unique(values: list[Any]) -> list[Any]:
    """An enum's values, each once (Stripe lists one API version many times: the model's Enum
    would hold the value under many names, which ruff refuses, PIE796)."""
    seen: set[str] = set()
    kept = []
    for value in values:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept


def _formats(node: Any) -> Any:
    """The schema with each format a generated package cannot type as pydantic would (see
    PATTERN_FORMATS, NOT_STR_FORMATS) made a string the model can hold, and each enum's values
    once. Only schema positions are visited: a property may be named `format`."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    for one in ONE_SCHEMA:
        if one in node:
            out[one] = _formats(node[one])
    for many in SCHEMA_LISTS:
        if isinstance(node.get(many), list):
            out[many] = [_formats(child) for child in node[many]]
    for named in SCHEMA_MAPS:
        if isinstance(node.get(named), dict):
            out[named] = {name: _formats(child) for name, child in node[named].items()}
    if isinstance(node.get("enum"), list):
        out["enum"] = _unique(node["enum"])
    kind = node.get("format")
    if not isinstance(kind, str):
        return out
    if takes_pattern(node):
        out["pattern"] = PATTERN_FORMATS[kind]
    elif kind in NOT_STR_FORMATS and isinstance(node.get("default"), str):
        del out["format"]
    return out
