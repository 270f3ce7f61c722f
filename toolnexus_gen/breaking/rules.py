"""The rules: each a small check registered under its ID (its title, category, default severity
and explanation are the catalogue's: diagnostics/catalogue.py BREAKING), run over every pair of
a tool as it was and as it is.

A check gets a `Pair` (the old and new ToolSurface, either None for a tool removed or added)
and yields what it found: a message and where in the spec it points. The schema comparison
(schema.py) and the model comparison (python.py) run once per pair, only for tools whose
surface changed, and the checks share their results.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from toolnexus_gen.breaking import python
from toolnexus_gen.breaking.schema import Change, canonical, compare, deprecated_arguments, shown
from toolnexus_gen.breaking.surface import PackageError, Surface, ToolSurface
from toolnexus_gen.diagnostics.catalogue import BREAKING
from toolnexus_gen.pipeline.tokens import estimate, estimate_text

CATEGORIES = ("callers", "handlers", "model")
MIN_TOKENS = 10  # a token cost moving by fewer is never reported, whatever the percentage
LEVELS = ("info", "warning", "error")  # in rising order


@dataclass(frozen=True)
class Accepted:
    """Why a finding is accepted: an entry of `accept` (or `--accept`) that names it."""

    entry: str  # as written: "get_weather:TN503"
    reason: str | None = None
    until: str | None = None  # a version or a date (YYYY-MM-DD)

    def as_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "reason": self.reason, "until": self.until}

    def said(self) -> str:
        """In words, for the text formats: "accepted (reason; until 2.0)"."""
        parts = [p for p in (self.reason, f"until {self.until}" if self.until else None) if p]
        return f"accepted ({'; '.join(parts)})" if parts else "accepted"


@dataclass(frozen=True)
class Finding:
    tool: str  # every finding names the tool it concerns
    rule: str
    category: str
    severity: str
    message: str
    path: str | None = None
    line: int | None = None
    col: int | None = None
    # where it points inside the tool's spec: (the spec key, a pointer inside its value), e.g.
    # ("input_schema", "/properties/zip"); None: the tool itself
    at: tuple[str, str] | None = field(default=None, compare=False)
    was: str | None = field(default=None, compare=False)  # a renamed tool's old name
    accepted: Accepted | None = None  # an accepted finding counts for no --fail-on
    # a wording change's text before and now, whole (the changelog shows a word diff)
    texts: tuple[str, str] | None = field(default=None, compare=False)
    # what kind of schema change it is (schema.KINDS, or "nullable"), for release notes that
    # count alike changes; None: not a schema change
    kind: str | None = field(default=None, compare=False)

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "tool": self.tool,
            "rule": self.rule,
            "category": self.category,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "col": self.col,
        }
        if self.accepted is not None:
            found["accepted"] = self.accepted.as_json()
        return found

    @property
    def title(self) -> str:
        return BREAKING[self.rule].title


@dataclass(frozen=True)
class Found:
    message: str
    at: tuple[str, str] | None = None
    severity: str | None = None  # None: the rule's default
    texts: tuple[str, str] | None = None  # a wording change: its text before and now
    kind: str | None = None  # the schema change's kind (see Finding.kind)


@dataclass
class Pair:
    """One tool at REF (old) and now (new)."""

    old: ToolSurface | None
    new: ToolSurface | None
    ref: str  # the revision compared against, as the user named it
    token_threshold: float = 10.0  # percent
    renamed_from: str | None = None

    @property
    def name(self) -> str:
        tool = self.new or self.old
        assert tool is not None
        return tool.name

    @cached_property
    def inputs(self) -> list[Change]:
        if self.old is None or self.new is None:
            return []
        return compare(self.old.arguments, self.new.arguments)

    @cached_property
    def outputs(self) -> list[Change]:
        if self.old is None or self.new is None:
            return []
        if self.old.output_schema is None or self.new.output_schema is None:
            return []
        return compare(self.old.output_schema, self.new.output_schema)

    @cached_property
    def models(self) -> list[python.PyChange]:
        old, new = self.old, self.new
        if old is None or new is None or old.model is None or new.model is None:
            return []
        if old.model_source is None or new.model_source is None:
            return []
        if old.model_source == new.model_source and old.model == new.model:
            return []
        try:
            return python.compare_models(
                old.model_source,
                old.model,
                new.model_source,
                new.model,
                f"models of {new.name}",
                old.exported,
            )
        except python.PythonError as exc:
            raise PackageError(str(exc)) from None


Check = Callable[[Pair], Iterable[Found]]
CHECKS: dict[str, Check] = {}


def check(code: str) -> Callable[[Check], Check]:
    """Register a check under its rule ID (which must be in the catalogue)."""

    def register(fn: Check) -> Check:
        assert code in BREAKING, f"{code} has no catalogue entry"
        CHECKS[code] = fn
        return fn

    return register


def _arg(path: str) -> str:
    return f"argument '{path}'" if path else "the arguments object"


def _input(changes: list[Change], kinds: tuple[str, ...], narrows: bool | None) -> Iterator[Change]:
    """The changes of these kinds that narrow (True), only widen (False), or all (None)."""
    for change in changes:
        if change.kind not in kinds:
            continue
        if narrows is None or (change.narrows if narrows else change.widens and not change.narrows):
            yield change


# -- callers: what a caller may send -----------------------------------------------------------


@check("TN501")
def tool_removed(pair: Pair) -> Iterator[Found]:
    if pair.new is None and pair.old is not None:
        source = pair.old.source()
        origin = f" (from {source})" if source else ""
        yield Found(f"tool removed{origin}: every call of it, valid at {pair.ref}, is refused now")


@check("TN502")
def tool_renamed(pair: Pair) -> Iterator[Found]:
    if pair.renamed_from is not None:
        yield Found(
            f"tool renamed from '{pair.renamed_from}': calls under the old name, valid at "
            f"{pair.ref}, are refused now",
            ("name", ""),
        )


def _narrowing(kind: str, say: Callable[[Change, str], str]) -> Check:
    def run(pair: Pair) -> Iterator[Found]:
        for change in _input(pair.inputs, (kind,), True):
            yield Found(say(change, pair.ref), ("input_schema", change.pointer))

    return run


check("TN503")(
    _narrowing(
        "required_added",
        lambda c, ref: (
            f"required {_arg(c.path)} added: a call without it, valid at {ref}, is refused now"
        ),
    )
)
check("TN504")(
    _narrowing(
        "made_required",
        lambda c, ref: (
            f"{_arg(c.path)} is required now: a call that leaves it out, valid at {ref}, is refused"
        ),
    )
)
check("TN505")(
    _narrowing(
        "removed_closed",
        lambda c, ref: (
            f"{_arg(c.path)} removed, and the object refuses properties it does not "
            f"list: a call that passes it, valid at {ref}, is refused now"
        ),
    )
)
check("TN506")(
    _narrowing(
        "removed_open",
        lambda c, ref: (
            f"{_arg(c.path)} removed: a call that passes it is still accepted, but "
            "its value is ignored now"
        ),
    )
)
check("TN507")(
    _narrowing(
        "type",
        lambda c, ref: f"{_arg(c.path)}: {c.detail}: a value valid at {ref} is refused now",
    )
)
check("TN508")(
    _narrowing(
        "enum",
        lambda c, ref: (
            f"{_arg(c.path)}: {c.detail}: a call with it, valid at {ref}, is refused now"
        ),
    )
)


@check("TN509")
def tightened(pair: Pair) -> Iterator[Found]:
    for change in _input(pair.inputs, ("bound",), True):
        yield Found(
            f"{_arg(change.path)}: {change.detail}: a value valid at {pair.ref} may be refused now",
            ("input_schema", change.pointer),
            None if change.proven else "warning",  # a pattern neither proven nor refuted
        )


check("TN510")(
    _narrowing(
        "closed",
        lambda c, ref: (
            f"{_arg(c.path)} {c.detail}: a call with an argument it does not list, valid at "
            f"{ref}, is refused now"
        ),
    )
)


@check("TN515")
def branches_overlap(pair: Pair) -> Iterator[Found]:
    for change in _input(pair.inputs, ("exclusive",), True):
        yield Found(
            f"{_arg(change.path)}: {change.detail}: oneOf refuses a value two branches match, "
            f"so a call valid at {pair.ref} {'is' if change.proven else 'may be'} refused now",
            ("input_schema", change.pointer),
            None if change.proven else "warning",  # not decided either way
        )


@check("TN511")
def default_changed(pair: Pair) -> Iterator[Found]:
    for change in _input(pair.inputs, ("default", "default_added"), None):
        added = change.kind == "default_added"  # a call that left it out got no value before
        yield Found(
            f"{_arg(change.path)}: {change.detail}: a call that leaves it out means something "
            "else now",
            ("input_schema", change.pointer),
            "info" if added else None,
        )


@check("TN512")
def output_broken(pair: Pair) -> Iterator[Found]:
    if pair.old is None or pair.new is None or pair.old.output_schema is None:
        return
    if pair.new.output_schema is None:
        yield Found(
            "output schema removed: MCP clients no longer get structuredContent they can "
            "validate, and code that read it breaks",
            ("name", ""),
            "error",  # not a result that may differ: no structured result at all
        )
        return
    for change in pair.outputs:
        if _breaks_readers(change):
            yield Found(
                f"{_result(change)}: code reading structuredContent as it was at {pair.ref} "
                "may meet a value it does not expect",
                ("output_schema", change.pointer),
                kind=_kind(change),
            )


def _result(change: Change) -> str:
    """An output schema change, as its readers see it."""
    where = f"result field '{change.path}'" if change.path else "the result"
    if change.kind in ("removed_closed", "removed_open"):
        return f"{where} is no longer in the results"
    if change.kind == "made_optional":
        return f"{where} may be missing now (required before)"
    if change.kind == "made_required":
        return f"{where} is always present now"
    if change.kind == "optional_added":
        return f"{where} added"
    if change.kind == "required_added":
        return f"{where} added, required"
    return f"{where}: {change.detail}"


def _kind(change: Change) -> str:
    """A change's kind as release notes count it: null newly accepted apart from other types."""
    if change.kind == "type" and change.detail.startswith("now also accepts null"):
        return "nullable"
    if change.kind == "type" and change.detail.startswith("no longer accepts null"):
        return "not_null"
    return change.kind


def _breaks_readers(change: Change) -> bool:
    """Whether an output schema change can break code that reads results (the reverse of what
    breaks callers: what it may hold grew, or a field it held may be gone)."""
    if change.kind in ("removed_closed", "removed_open"):
        return True
    quiet = ("optional_added", "required_added", "default", "default_added", "description")
    if change.kind in (*quiet, "examples"):  # a result field added is compatible by convention
        return False
    return change.widens and not _annotation_only(change)


def _annotation_only(change: Change) -> bool:
    """A `format` added, changed or removed: the runtime's MCP server checks results without
    asserting formats (as JSON Schema 2020-12 does by default), so no result is refused or
    let through by it."""
    return change.kind == "bound" and change.detail.startswith("format ")


@check("TN513")
def strict_switched(pair: Pair) -> Iterator[Found]:
    if pair.old is None or pair.new is None:
        return
    before, after = pair.old.strict, pair.new.strict
    off = [t for t in before if t in after and before[t] and not after[t]]
    on = [t for t in before if t in after and not before[t] and after[t]]
    if off:
        yield Found(
            f"strict mode switched off for {', '.join(off)}: the provider no longer holds the "
            "model's calls to the schema",
            ("strict", ""),
        )
    if on:
        yield Found(f"strict mode switched on for {', '.join(on)}", ("strict", ""), "info")


@check("TN514")
def targets_dropped(pair: Pair) -> Iterator[Found]:
    if pair.old is None or pair.new is None:
        return
    gone = [t for t in pair.old.targets if t not in pair.new.targets]
    added = [t for t in pair.new.targets if t not in pair.old.targets]
    if gone:
        yield Found(
            f"no longer sent to {', '.join(gone)}: models there cannot call it", ("name", "")
        )
    if added:
        yield Found(f"now also sent to {', '.join(added)}", ("name", ""), "info")


# -- handlers: code written against the generated package --------------------------------------


@check("TN520")
def method_removed(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or old.method is None:
        return
    model = f" and its model {old.model}" if old.model else ""
    if new is None:
        yield Found(
            f"ToolHandlers.{old.method}{model} removed with the tool: handler code "
            "that implements it or imports the model breaks"
        )
    elif new.method is None:
        how = new.source() or "its binding"
        yield Found(
            f"ToolHandlers.{old.method} removed: the tool runs through {how} now; the handler "
            "method is never called",
            ("name", ""),
        )
    elif new.method != old.method:
        yield Found(
            f"ToolHandlers.{old.method} renamed to {new.method}: a handler subclass must "
            "rename its method",
            ("name", ""),
        )


@check("TN521")
def model_renamed(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or old.model is None:
        return
    if old.method is not None and (new is None or new.method != old.method):
        return  # TN520 says so, model and all
    if new is None:
        yield Found(f"model {old.model} removed with the tool: code that imports it breaks")
    elif new.model != old.model:
        now = f"renamed to {new.model}" if new.model else "removed"
        yield Found(f"model {old.model} {now}: code that imports it breaks", ("name", ""))
    for change in pair.models:
        if change.kind == "class_renamed":  # a nested model the package exports by name
            yield Found(change.detail, ("input_schema", ""))


@check("TN522")
def method_added(pair: Pair) -> Iterator[Found]:
    new, old = pair.new, pair.old
    if new is None or new.method is None or (old is not None and old.method is not None):
        return
    yield Found(
        f"ToolHandlers gains the abstract method {new.method}: a handler subclass written "
        f"for {pair.ref} is refused by Toolkit() until it implements it",
        ("name", ""),
    )


def _model_check(kind: str) -> Check:
    def run(pair: Pair) -> Iterator[Found]:
        for change in pair.models:
            if change.kind == kind:
                yield Found(
                    f"{pair.new.model if pair.new else ''}: {change.detail}", ("input_schema", "")
                )

    return run


check("TN523")(_model_check("field_type"))
check("TN524")(_model_check("field_optional"))
check("TN525")(_model_check("field_removed"))
check("TN526")(_model_check("enum_member"))


# -- widening: nothing breaks (info, for the changelog) ----------------------------------------


@check("TN530")
def tool_added(pair: Pair) -> Iterator[Found]:
    if pair.old is None and pair.new is not None:
        source = pair.new.source()
        lines = pair.new.description.strip().splitlines()
        said = f": {lines[0]}" if lines else ""
        yield Found(f"tool added{f' (from {source})' if source else ''}{said}", ("name", ""))


@check("TN531")
def optional_added(pair: Pair) -> Iterator[Found]:
    for change in _input(pair.inputs, ("optional_added",), None):
        yield Found(f"optional {_arg(change.path)} added", ("input_schema", change.pointer))


@check("TN532")
def widened(pair: Pair) -> Iterator[Found]:
    kinds = ("made_optional", "type", "enum", "bound", "closed")
    for change in _input(pair.inputs, kinds, False):
        yield Found(f"{_arg(change.path)}: {change.detail}", ("input_schema", change.pointer))


@check("TN534")
def format_annotation(pair: Pair) -> Iterator[Found]:
    for change in _input(pair.inputs, ("format",), None):
        yield Found(f"{_arg(change.path)}: {change.detail}", ("input_schema", change.pointer))


def _refuses_results(change: Change) -> bool:
    """Whether an output schema change refuses results it took (the same narrowing as for
    arguments, seen by whoever writes results: the handler, or the upstream of a binding); a
    result field dropped from an open object is still taken (ignored)."""
    return (
        change.narrows
        and change.kind not in ("removed_open", *_WORDING)
        and not _annotation_only(change)
    )


_WORDING = ("default", "default_added", "description", "examples")  # TN540, TN541


def _narrowed_results(pair: Pair, bound: bool) -> Iterator[Found]:
    """The output schema narrowed for a tool run by a handler (bound False) or by a binding."""
    old, new = pair.old, pair.new
    if old is None or new is None or (new.method is None) is not bound:
        return
    # the runtime's MCP server checks every result against outputSchema: without an mcp entry
    # nothing refuses a result, but readers of the schema may
    served = "mcp" in new.targets or not new.entries
    for change in pair.outputs:
        if _refuses_results(change):
            what = _result(change)
            if change.kind == "made_required":  # as whoever writes results reads it
                what = f"result field '{change.path}' is required now"
            if bound:
                said = (
                    f"{what}: a result {new.source() or 'its binding'} returned, "
                    f"valid at {pair.ref}, may be an error result now"
                )
            else:
                said = (
                    f"{what}: a result ToolHandlers.{new.method} returned, valid at "
                    f"{pair.ref}, is an error result now"
                )
            yield Found(
                said + ("" if served else " (where results are checked: no mcp entry here)"),
                ("output_schema", change.pointer),
                None if served else "warning",
                kind=_kind(change),
            )


@check("TN527")
def results_refused(pair: Pair) -> Iterator[Found]:
    yield from _narrowed_results(pair, bound=False)


@check("TN528")
def bound_results_refused(pair: Pair) -> Iterator[Found]:
    yield from _narrowed_results(pair, bound=True)


@check("TN533")
def output_extended(pair: Pair) -> Iterator[Found]:
    if pair.old is None or pair.new is None or pair.new.output_schema is None:
        return
    if pair.old.output_schema is None:
        yield Found(
            "output schema added: results carry structuredContent",
            ("output_schema", ""),
            kind="output_added",
        )
        return
    for change in pair.outputs:
        if change.kind not in _WORDING and not _breaks_readers(change):
            if not _refuses_results(change):
                yield Found(_result(change), ("output_schema", change.pointer), kind=_kind(change))


# -- model: what a model is shown ---------------------------------------------------------------


@check("TN540")
def wording(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or new is None:
        return
    for key in ("title", "description"):
        before, after = getattr(old, key), getattr(new, key)
        if before != after:
            texts = (before, after) if before and after else None
            yield Found(f"{key} {_changed(before, after)}", (key, ""), texts=texts)
    for part, changes in (("input_schema", pair.inputs), ("output_schema", pair.outputs)):
        for change in changes:
            if change.kind == "description":
                what = "output: " if part == "output_schema" else ""
                yield Found(what + change.detail, (part, change.pointer), texts=change.texts)


@check("TN541")
def examples_changed(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or new is None:
        return
    if canonical(old.examples) != canonical(new.examples):
        yield Found(
            f"examples {_changed(old.examples, new.examples, quote=False)}", ("examples", "")
        )
    for change in pair.inputs:
        if change.kind == "examples":
            yield Found(change.detail, ("input_schema", change.pointer))


@check("TN542")
def annotations_changed(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or new is None or canonical(old.annotations) == canonical(new.annotations):
        return
    before = old.annotations if isinstance(old.annotations, dict) else {}
    after = new.annotations if isinstance(new.annotations, dict) else {}
    parts = [
        f"{key} {shown(before.get(key))} -> {shown(after.get(key))}"
        for key in dict.fromkeys([*before, *after])
        if canonical(before.get(key)) != canonical(after.get(key))
    ]
    yield Found(f"annotations changed: {', '.join(parts)}", ("annotations", ""))


@check("TN543")
def tokens(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if old is None or new is None:
        return
    before = dict(old.entries)
    both = [(target, before[target], entry) for target, entry in new.entries if target in before]
    changed = [(target, was, now) for target, was, now in both if was != now]
    if not changed:
        return
    first = _may_move(changed[0][1], changed[0][2], pair)
    if first is None:
        return  # the providers' entries move alike: the first one tells whether to count
    moved = []
    for target, was_entry, entry in changed:
        was, count = first if target == changed[0][0] else (estimate(was_entry), estimate(entry))
        delta = abs(count - was)
        if was and delta >= MIN_TOKENS and delta * 100 > pair.token_threshold * was:
            moved.append(f"{target} {was} -> {count} ({(count - was) * 100 / was:+.0f}%)")
    if moved:
        yield Found(f"estimated tokens of its definition: {', '.join(moved)}", ("description", ""))


def _may_move(old: Any, new: Any, pair: Pair) -> tuple[int, int] | None:
    """An entry's tokens before and now if they may have moved past the threshold (estimating
    costs far more than this): its compact JSON's length moved by half the threshold or more,
    and then its estimate by three quarters of it or more; else None."""
    before, after = _compact(old), _compact(new)
    if abs(len(after) - len(before)) * 200 < pair.token_threshold * len(before):
        return None
    was, count = estimate_text(before), estimate_text(after)  # estimate(), from the same text
    if was == 0 or abs(count - was) * 400 >= 3 * pair.token_threshold * was:
        return was, count
    return None


def _compact(entry: Any) -> str:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"))


def _changed(before: Any, after: Any, *, quote: bool = True) -> str:
    if not before:
        return "added"
    if not after:
        return "removed"
    if quote and isinstance(before, str) and isinstance(after, str):
        return f"changed from {shown(before)} to {shown(after)}"
    return "changed"


@check("TN544")
def deprecated(pair: Pair) -> Iterator[Found]:
    old, new = pair.old, pair.new
    if new is None:
        return
    now = new.deprecation
    if now is not None and (old is None or old.deprecation is None):
        since = f" since {now['since']}" if isinstance(now.get("since"), str) else ""
        note = f": {now['note']}" if isinstance(now.get("note"), str) else ""
        yield Found(f"tool deprecated{since}{note}", ("deprecated", ""))
    before = set(deprecated_arguments(old.input_schema)) if old is not None else set()
    for pointer in deprecated_arguments(new.input_schema):
        if pointer not in before:
            name = ".".join(part for part in pointer.split("/") if part not in ("", "properties"))
            yield Found(f"argument '{name}' deprecated", ("input_schema", pointer))


# -- the whole surface ---------------------------------------------------------------------------


def pairs(old: Surface, new: Surface, ref: str, token_threshold: float) -> list[Pair]:
    """Every tool at REF or now, paired by name; a tool gone and one added with the same
    arguments and description (or the same binding: an MCP server's tool under a new prefix)
    are one tool renamed."""
    found = []
    gone = [name for name in old.tools if name not in new.tools]
    added = [name for name in new.tools if name not in old.tools]
    renamed: dict[str, str] = {}  # new name -> old name
    if gone and added:
        keys: dict[str, list[str]] = {}
        for name in added:
            for key in _rename_keys(new.tools[name]):
                keys.setdefault(key, []).append(name)
        for name in gone:
            for key in _rename_keys(old.tools[name]):
                free = [n for n in keys.get(key, []) if n not in renamed]
                if free:
                    renamed[free[0]] = name
                    break
    taken = set(renamed.values())
    for name in sorted({*old.tools, *new.tools}):
        before, after = old.tools.get(name), new.tools.get(name)
        if before is not None and after is not None and before == after:
            continue  # the common case, settled without a look inside
        if after is None and name in taken:
            continue  # reported under its new name
        if before is None and name in renamed:
            before = old.tools[renamed[name]]
            found.append(Pair(before, after, ref, token_threshold, renamed[name]))
            continue
        found.append(Pair(before, after, ref, token_threshold))
    return found


def _rename_keys(tool: ToolSurface) -> list[str]:
    keys = [canonical(["same", tool.arguments, tool.description])]
    if tool.binding is not None:
        keys.append(canonical(["bound", tool.binding]))
    return keys


def findings(pairs: Iterable[Pair]) -> list[Finding]:
    """What every check finds in every pair, sorted by tool, then severity (worst first)."""
    found = []
    for pair in pairs:
        for code, run in CHECKS.items():
            rule = BREAKING[code]
            for hit in run(pair):
                found.append(
                    Finding(
                        pair.name,
                        code,
                        rule.category,
                        hit.severity or rule.severity,
                        hit.message,
                        at=hit.at,
                        was=pair.renamed_from,
                        texts=hit.texts,
                        kind=hit.kind,
                    )
                )
    return sorted(found, key=order)


def order(finding: Finding) -> tuple[Any, ...]:
    return (finding.tool, -LEVELS.index(finding.severity), finding.rule, finding.message)


def selected(
    found: Iterable[Finding], use: Iterable[str], excepted: Iterable[str], ignore: Iterable[str]
) -> list[Finding]:
    """The findings of the categories in `use`, but the rules in `excepted` and the tools
    matching a name or glob in `ignore` (a renamed tool: either name)."""
    use, excepted, ignore = set(use), set(excepted), list(ignore)

    def ignored(finding: Finding) -> bool:
        names = [n for n in (finding.tool, finding.was) if n]
        return any(fnmatch.fnmatchcase(n, pattern) for n in names for pattern in ignore)

    return [f for f in found if f.category in use and f.rule not in excepted and not ignored(f)]


def at_or_above(found: Iterable[Finding], level: str) -> bool:
    """Whether a finding not accepted is at `level` or above."""
    rank = LEVELS.index(level)
    return any(LEVELS.index(f.severity) >= rank for f in found if f.accepted is None)


def spec_findings(old: Any, new: Any, ref: str) -> list[Finding]:
    """The findings between two versions of one tool's spec data (a snapshot file as it is and
    as the source would write it; None for a tool added or removed): callers and model rules,
    no Python (spec data has none)."""
    from toolnexus_gen.breaking.surface import from_spec

    before = from_spec(old) if isinstance(old, dict) else None
    after = from_spec(new) if isinstance(new, dict) else None
    if before is None and after is None:
        return []
    return findings([Pair(before, after, ref)])
