"""The generated Python surface as handler code sees it: the methods of `ToolHandlers`, the
dispatch table's tools, and each argument model's fields (their annotations, whether they are
required) with the classes they use. Read with `ast` from the package's text, never imported,
so a package from any generator version (or a broken one) reads the same way.
"""

from __future__ import annotations

import ast
import re
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
    kind: str  # field_removed, field_type, field_optional, enum_member
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
    """The classes of a model module: fields of models, members of enums."""
    found: dict[str, PyClass] = {}
    source = _Source(text)
    for node in parse(text, where).body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {_called(base) for base in node.bases}
        if bases & {"Enum", "StrEnum", "IntEnum"}:
            members = tuple(
                target.id
                for item in node.body
                if isinstance(item, ast.Assign)
                for target in item.targets
                if isinstance(target, ast.Name)
            )
            found[node.name] = PyClass({}, members, True)
            continue
        fields = {}
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                name = item.target.id
                if name == "model_config" or _called(item.annotation) == "ClassVar":
                    continue
                written = source.segment(item.annotation)
                fields[name] = Field(
                    written,
                    frozenset(source.segment(m) for m in _members(item.annotation)),
                    frozenset(_NAME.findall(written)),
                    item.annotation,
                )
        found[node.name] = PyClass(fields, (), False)
    return found


# A field's description, as datamodel-code-generator writes it (one string literal).
_DESCRIPTION = re.compile(r"""description=(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")


def same_shape(old_text: str, new_text: str) -> bool:
    """Whether two model modules differ in field descriptions at most (then nothing handler
    code sees differs, and neither needs parsing)."""
    return _DESCRIPTION.sub("description=", old_text) == _DESCRIPTION.sub("description=", new_text)


def compare_models(
    old_text: str, old_class: str, new_text: str, new_class: str, where: str
) -> list[PyChange]:
    """What code reading `args` of the old model finds changed in the new one."""
    if old_class == new_class and same_shape(old_text, new_text):
        return []
    old, new = classes(old_text, f"REF:{where}"), classes(new_text, where)
    found: list[PyChange] = []
    seen: set[tuple[str, str]] = set()

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
    except ValueError:
        return None


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
