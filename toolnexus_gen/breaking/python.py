"""The generated Python surface as handler code sees it: the methods of `ToolHandlers`, the
dispatch table's tools, and each argument model's fields (their annotations, whether they are
required) with the classes they use. Read with `ast` from the package's text, never imported,
so a package from any generator version (or a broken one) reads the same way.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolnexus_gen.toolspec.naming import python_names


class PythonError(Exception):
    """A generated module that is not Python: the package is corrupt."""


@dataclass(frozen=True)
class Field:
    annotation: str  # as written, e.g. "StrictStr | None"
    members: frozenset[str]  # the union's members, e.g. {"StrictStr", "None"}, as written
    names: frozenset[str]  # the names the annotation uses (classes of the module among them)
    node: ast.expr = field(compare=False)  # the annotation (normalised only when it differs)

    def normalised(self) -> frozenset[str]:
        """The members as a type checker sees them, as ast writes them: the same type written
        otherwise by another generator version (quotes, line breaks, `str` or pydantic's
        `StrictStr`) compares equal."""
        return frozenset(
            _ALIAS.sub(lambda m: ALIASES[m.group(0)], ast.unparse(member))
            for member in _members(self.node)
        )


# pydantic's constrained aliases: Annotated[<builtin>, ...] to a type checker
ALIASES = {
    **dict.fromkeys(("StrictStr", "EmailStr", "NameEmail", "SecretStr"), "str"),
    **dict.fromkeys(("StrictInt", "PositiveInt", "NegativeInt", "NonNegativeInt"), "int"),
    **dict.fromkeys(("NonPositiveInt",), "int"),
    **dict.fromkeys(("StrictFloat", "PositiveFloat", "NegativeFloat", "FiniteFloat"), "float"),
    **dict.fromkeys(("NonNegativeFloat", "NonPositiveFloat"), "float"),
    **dict.fromkeys(("StrictBool",), "bool"),
    **dict.fromkeys(("StrictBytes",), "bytes"),
    **dict.fromkeys(
        ("AwareDatetime", "NaiveDatetime", "PastDatetime", "FutureDatetime"), "datetime"
    ),
    **dict.fromkeys(("PastDate", "FutureDate"), "date"),
}
_ALIAS = re.compile(r"\b(?:" + "|".join(ALIASES) + r")\b")


@dataclass(frozen=True)
class PyClass:
    fields: dict[str, Field]  # a model's fields
    members: tuple[str, ...]  # an Enum's members
    is_enum: bool


@dataclass(frozen=True)
class Bound:
    """What dispatch.py says of one tool: its model, its handler method, its binding."""

    model: str | None
    method: str | None
    binding: Any = None


@dataclass(frozen=True)
class PyChange:
    kind: str  # field_removed, field_type, field_optional, enum_member, class_renamed
    path: str  # "city", "address.zip"
    detail: str


def parse(text: str, where: str) -> ast.Module:
    try:
        return ast.parse(text, filename=where)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise PythonError(
            f"{where}{f':{line}' if line else ''}: not Python ({exc.args[0]})"
        ) from None


def handler_methods(text: str, where: str) -> dict[str, str | None]:
    """The methods of class ToolHandlers: name -> the class of its `args` (None if untyped)."""
    methods: dict[str, str | None] = {}
    for node in parse(text, where).body:
        if isinstance(node, ast.ClassDef) and node.name == "ToolHandlers":
            for item in node.body:
                if isinstance(
                    item, (ast.FunctionDef, ast.AsyncFunctionDef)
                ) and not item.name.startswith("_"):
                    args = item.args.args
                    annotation = args[1].annotation if len(args) > 1 else None
                    methods[item.name] = ast.unparse(annotation) if annotation is not None else None
    return methods


def dispatch_table(text: str, where: str) -> dict[str, Bound]:
    """The `ToolSpec(name=..., model=..., method=..., binding=...)` entries of dispatch.py."""
    table: dict[str, Bound] = {}
    for node in ast.walk(parse(text, where)):
        if not (isinstance(node, ast.Call) and _called(node.func) == "ToolSpec"):
            continue
        given = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        name = _literal(given.get("name"))
        if not isinstance(name, str):
            continue
        model = given.get("model")
        method = _literal(given.get("method"))
        table[name] = Bound(
            model.id if isinstance(model, ast.Name) else None,
            method if isinstance(method, str) else None,
            _literal(given.get("binding")),
        )
    return table


def model_modules(text: str, where: str) -> dict[str, str]:
    """models/__init__.py: each model class -> its module's file name (models/x.py)."""
    found = {}
    for node in parse(text, where).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = f"models/{node.module.replace('.', '/')}.py"
    return found


def fallback_bound(tool: str, methods: dict[str, str | None], models: dict[str, str]) -> Bound:
    """A tool's model and method by the naming rules, for a dispatch.py without ToolSpec calls."""
    names = python_names(tool)
    return Bound(
        names.model if names.model in models else None,
        names.method if names.method in methods else None,
    )


def classes(text: str, where: str) -> dict[str, PyClass]:
    """The classes of a model module: fields of models, members of enums. Read statement by
    statement, each text once per process: the classes and fields that several tools' modules
    share ($defs, common arguments), and those a tool keeps from REF to now, are parsed once."""
    found: dict[str, PyClass] = {}
    try:
        for block in _CLASS_START.split(text):
            found.update(_block_classes(block))
    except (SyntaxError, ValueError):  # cut inside a statement: read the module whole
        return _classes(text, parse(text, where))
    return found


# Where a top-level class starts, and where a statement of its body does (four spaces and a
# name): the module is cut there and each part parsed alone. A part cut inside a string or a
# bracket does not parse, and the module is then parsed whole.
_CLASS_START = re.compile(r"^(?=class\s)", re.MULTILINE)
_FIELD_START = re.compile(r"^(?=    [A-Za-z_])", re.MULTILINE)
_TOP_LEVEL = re.compile(r"^(?=[^\s#)\]}])", re.MULTILINE)  # a line at column 0 (not a bracket)


@functools.lru_cache(maxsize=4096)
def _block_classes(block: str) -> dict[str, PyClass]:
    """The class a part of a module starts with (or none: the imports)."""
    if not block.startswith("class"):
        ast.parse(block)  # the imports: corrupt text is still refused
        return {}
    head, *rest = _FIELD_START.split(block)
    *parts, tail = rest or [""]
    pieces = _TOP_LEVEL.split(tail, maxsplit=1)  # the class body ends at a top-level statement
    parts.append(pieces[0])
    if len(pieces) > 1:
        ast.parse(pieces[1])
    header = ast.parse(head + "    pass\n").body
    if len(header) != 1 or not isinstance(header[0], ast.ClassDef):
        raise SyntaxError("not one class")
    items = [item for part in parts if part.strip() for item in _items(_dedent(part))]
    return {header[0].name: _class(header[0], items)}


def _dedent(part: str) -> str:
    return "".join(line[4:] if line.startswith("    ") else line for line in part.splitlines(True))


# What a class body's statement declares: ("field", name, Field) or ("member", name, None).
Item = tuple[str, str, "Field | None"]


@functools.lru_cache(maxsize=16384)
def _items(text: str) -> tuple[Item, ...]:
    return _body_items(ast.parse(text).body, _Source(text))


def _body_items(body: list[ast.stmt], source: _Source) -> tuple[Item, ...]:
    found: list[Item] = []
    for item in body:
        if isinstance(item, ast.Assign):
            found += [("member", t.id, None) for t in item.targets if isinstance(t, ast.Name)]
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            name = item.target.id
            if name == "model_config" or _called(item.annotation) == "ClassVar":
                continue
            written = source.segment(item.annotation)
            found.append(
                (
                    "field",
                    name,
                    Field(
                        written,
                        frozenset(source.segment(m) for m in _members(item.annotation)),
                        frozenset(_NAME.findall(written)),
                        item.annotation,
                    ),
                )
            )
    return tuple(found)


def _class(node: ast.ClassDef, items: Sequence[Item]) -> PyClass:
    """A class from its statement (the header) and what its body declares."""
    if {_called(base) for base in node.bases} & {"Enum", "StrEnum", "IntEnum"}:
        return PyClass({}, tuple(name for kind, name, _ in items if kind == "member"), True)
    return PyClass({name: f for kind, name, f in items if f is not None}, (), False)


def _classes(text: str, module: ast.Module) -> dict[str, PyClass]:
    source = _Source(text)
    return {
        node.name: _class(node, _body_items(node.body, source))
        for node in module.body
        if isinstance(node, ast.ClassDef)
    }


# A field's description, as datamodel-code-generator writes it (one string literal).
_DESCRIPTION = re.compile(r"""description=(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")


def same_shape(old_text: str, new_text: str) -> bool:
    """Whether two model modules differ in field descriptions at most (then nothing handler
    code sees differs, and neither needs parsing)."""
    return _DESCRIPTION.sub("description=", old_text) == _DESCRIPTION.sub("description=", new_text)


def compare_models(
    old_text: str,
    old_class: str,
    new_text: str,
    new_class: str,
    where: str,
    exported: frozenset[str] = frozenset(),
) -> list[PyChange]:
    """What code reading `args` of the old model finds changed in the new one. `exported`: the
    classes models/__init__.py exported at REF (a nested class renamed with the same fields
    breaks only code that imports it by name, and only these are offered by name)."""
    if old_class == new_class and same_shape(old_text, new_text):
        return []
    old, new = classes(old_text, f"REF:{where}"), classes(new_text, where)
    found: list[PyChange] = []
    seen: set[tuple[str, str]] = set()
    alike: dict[tuple[str, str], bool] = {}

    def same(before_name: str, after_name: str) -> bool:
        """Whether two classes hold the same fields of the same types (or the same members),
        the classes they use alike too, whatever their names."""
        key = (before_name, after_name)
        if key in alike:
            return alike[key]
        before, after = old.get(before_name), new.get(after_name)
        if before is None or after is None:
            return before_name == after_name
        alike[key] = True  # a class that uses itself: alike unless something else differs
        if before.is_enum or after.is_enum:
            result = before.is_enum and after.is_enum and before.members == after.members
        else:
            result = before.fields.keys() == after.fields.keys() and all(
                renamed(was, after.fields[name]) is not None for name, was in before.fields.items()
            )
        alike[key] = result
        return result

    def renamed(was: Field, now: Field) -> dict[str, str] | None:
        """The classes renamed between two annotations that read alike but for those names
        (each pair alike): {} when written alike, None when they differ otherwise."""
        before, after = was.normalised(), now.normalised()
        if before == after:
            return {}
        gone = sorted(n for n in was.names - now.names if n in old)
        came = sorted(n for n in now.names - was.names if n in new)
        if len(gone) != len(came) or not gone:
            return None
        mapping = dict(zip(gone, came, strict=True))
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, gone)) + r")\b")
        moved = frozenset(pattern.sub(lambda m: mapping[m.group(0)], m) for m in before)
        if moved != after or not all(same(a, b) for a, b in mapping.items()):
            return None
        return mapping

    def walk(before_name: str, after_name: str, path: str) -> None:
        if (before_name, after_name) in seen:
            return
        seen.add((before_name, after_name))
        before, after = old.get(before_name), new.get(after_name)
        if before is None or after is None:
            return
        if before.is_enum or after.is_enum:
            if before.is_enum and after.is_enum:
                gone = [m for m in before.members if m not in after.members]
                if gone:
                    listed = ", ".join(f"{after_name}.{m}" for m in gone)
                    named = f" (field '{path}')" if path else ""
                    found.append(
                        PyChange("enum_member", path, f"enum member {listed} removed{named}")
                    )
            return
        for name, was in before.fields.items():
            at = f"{path}.{name}" if path else name
            now = after.fields.get(name)
            if now is None:
                found.append(
                    PyChange("field_removed", at, f"field '{at}' ({was.annotation}) removed")
                )
                continue
            mapping = renamed(was, now) if was.members != now.members else {}
            if mapping:
                for was_class, now_class in mapping.items():
                    if was_class in exported:
                        found.append(
                            PyChange(
                                "class_renamed",
                                at,
                                f"model {was_class} renamed to {now_class} (the same fields; field "
                                f"'{at}'): code that imports it by name breaks",
                            )
                        )
                continue
            if was.members != now.members and was.normalised() != now.normalised():
                added = now.normalised() - was.normalised()
                if added == {"None"}:
                    what = f"field '{at}' may be None now ({was.annotation} -> {now.annotation})"
                    found.append(PyChange("field_optional", at, what))
                elif added:
                    what = f"field '{at}' changed type: {was.annotation} -> {now.annotation}"
                    found.append(PyChange("field_type", at, what))
            for used in sorted(was.names & now.names):
                if used in old and used in new:
                    walk(used, used, at)

    walk(old_class, new_class, "")
    return found


def _called(node: Any) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _called(node.value)
    return ""


def _literal(node: Any) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # not a literal (or one no generated package writes: `{{}: 1}`)


_NONE = ast.Constant(None)
_NAME = re.compile(r"[A-Za-z_]\w*")  # the names an annotation uses (strings' words too: harmless)


def _members(node: ast.expr) -> list[ast.expr]:
    """The members of a union annotation (X | Y, Optional[X], Union[X, Y])."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*_members(node.left), *_members(node.right)]
    if isinstance(node, ast.Subscript) and _called(node.value) in ("Optional", "Union"):
        inner = node.slice
        parts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        found = [m for part in parts for m in _members(part)]
        return [*found, _NONE] if _called(node.value) == "Optional" else found
    if isinstance(node, ast.Subscript) and _called(node.value) == "Annotated":
        inner = node.slice
        first = inner.elts[0] if isinstance(inner, ast.Tuple) else inner
        return _members(first)
    return [node]


class _Source:
    """The text of ast nodes, by their byte offsets (ast.get_source_segment splits the whole
    text into lines at every call)."""

    def __init__(self, text: str) -> None:
        self.lines = text.encode("utf-8").splitlines(keepends=True)

    def segment(self, node: ast.expr) -> str:
        if node is _NONE:
            return "None"
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        end = node.end_col_offset if node.end_col_offset is not None else len(self.lines[last])
        if first == last:
            raw = self.lines[first][node.col_offset : end]
        else:
            parts = [self.lines[first][node.col_offset :], *self.lines[first + 1 : last]]
            raw = b"".join([*parts, self.lines[last][:end]])
        return " ".join(raw.decode("utf-8").split())
