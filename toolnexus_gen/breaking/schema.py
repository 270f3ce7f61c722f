"""How one JSON Schema compares with another, as seen by whoever sends values to it: every
difference as a `Change` that narrows (a value the old schema accepted may be refused now),
widens (more is accepted), or neither (wording, a default), with the argument it concerns.

A structural subset check: `$ref` (local, as bundled schemas have them) is followed, `allOf`
merged, `anyOf`/`oneOf`, type lists, `enum` over several types and nullability (`null` in
`type`, a null alternative, OpenAPI's `nullable`) become alternatives matched by type, and each
old alternative must be covered by a new one. Bounds, formats, patterns, `multipleOf`, items and
objects (open or closed, required or not) are compared keyword by keyword. What it cannot prove
compatible (a changed `pattern`, an added `not` or `if`) counts as narrowing, never as nothing.

A `$ref` met again while it is being expanded (a recursive schema through `anyOf` or `allOf`)
is not expanded again: it stands as written and is compared by its text. Each comparison has a
work budget (WORK_BUDGET steps: nodes resolved, alternatives made) and a depth bound; past
either, the schema is reported as not compared (a change that may narrow), never expanded
further: a schema of a few kilobytes can name exponentially many alternatives.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from toolnexus_gen.breaking.overlap import overlap
from toolnexus_gen.breaking.pattern import Slow, loosened, search
from toolnexus_gen.toolspec.formats import ASSERTED_FORMATS, PATTERN_FORMATS, takes_pattern
from toolnexus_gen.toolspec.pointer import join_pointer, resolve

# Keywords that never change what validates (x-* keys too).
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$id",
        "$schema",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "$defs",
        "definitions",
        "discriminator",
        "xml",
        "externalDocs",
        "example",
    }
)
# Validation keywords compared as a whole: any change to them counts as narrowing when it adds
# or changes one (its meaning is not compared), widening when it removes one.
OPAQUE = (
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "unevaluatedItems",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$dynamicRef",
    "$recursiveRef",
    "$ref",  # one left as written: unresolvable, or met again inside its own expansion
)
LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
BOUNDED = frozenset(
    {*LOWER, *UPPER, "multipleOf", "pattern", "format", "uniqueItems"}
)  # what bounds() compares
# The formats a call is refused for: the generated argument model types them (AwareDatetime,
# date, time, timedelta, AnyUrl, UUID, IPv4Address/IPv6Address) or gives them a pattern
# (email, idn-email, ulid, byte, hostname), and the runtime validates every call with it. Any
# other format (int32, int64, float, double, uri-reference, an API's own name) is a StrictInt,
# StrictFloat or StrictStr there: an annotation, as JSON Schema's validation reads `format` by
# default. The providers refuse no call for a format either (strict mode shapes what a model
# writes, not what a caller may send).
# those the model leaves a plain str when the property's default is a string (pydantic does not
# validate a default, so the model types it as the default is)
_TYPED_FORMATS = frozenset({"date-time", "date", "time", "duration", "uri", "uuid", "ipv4", "ipv6"})
_IN_UNION = "x-toolnexus-string-of-a-union"  # marks the string alternative _only() splits off
MAX_REFS = 64  # $ref hops from one node: a longer chain is a cycle of bare refs
WORK_BUDGET = 100_000  # steps of one comparison (nodes resolved, alternatives made)
MAX_BRANCHES = 24  # oneOf branches checked pairwise for overlap (more: not checked)
MAX_DEPTH = 100  # nested $ref/anyOf/allOf expansions and compared nodes, one inside another


@dataclass(frozen=True)
class Change:
    kind: str  # see KINDS
    path: str  # the argument, as a caller names it: "city", "address.zip", "tags[]"; "" = root
    pointer: str  # the node in the new schema (or where it would stand), for its place
    narrows: bool  # a value valid before may be refused now
    widens: bool  # a value refused before may be accepted now (both: a changed type, pattern)
    detail: str  # what changed, in words
    proven: bool = True  # False: it may narrow, not shown either way (a pattern not compared)
    texts: tuple[str, str] | None = None  # a wording change's text before and now, whole


KINDS = (
    "required_added",  # a new required property
    "made_required",  # an optional property is required now
    "made_optional",
    "optional_added",
    "removed_closed",  # a property gone from an object that refuses unknown properties
    "removed_open",  # a property gone from an object that takes unknown ones (ignored now)
    "type",  # types, nullability, alternatives
    "enum",  # enum and const values
    "bound",  # bounds, lengths, pattern, a checked format, multipleOf, uniqueItems, opaque keywords
    "format",  # a format nothing checks, added, changed or removed (an annotation)
    "closed",  # additionalProperties / unevaluatedProperties false
    "exclusive",  # oneOf branches that meet now
    "default",  # changed or removed
    "default_added",
    "description",  # title or description
    "examples",
)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def compare(old: Any, new: Any) -> list[Change]:
    """Every difference between two schemas (None: no schema, any value) from the old one's
    point of view, deduplicated, in walk order. A schema too complex to compare (see
    WORK_BUDGET) is one change: not compared, which may narrow and widen."""
    walk = _Walk(old if old is not None else True, new if new is not None else True)
    try:
        walk.node(walk.old_root, walk.new_root, "", "", "")
    except _TooComplex as exc:
        return [
            Change(
                "bound",
                walk.where[0],
                walk.where[1],
                True,
                True,
                f"not compared: its schema is too complex ({exc})",
            )
        ]
    seen: set[tuple[str, str, str, str]] = set()
    found = []
    for change in walk.found:
        key = (change.kind, change.path, change.pointer, change.detail)
        if key not in seen:
            seen.add(key)
            found.append(change)
    return found


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class _Alt:
    """One alternative of a node: a schema without anyOf/oneOf and with one type at most."""

    schema: dict[str, Any]
    pointer: str
    type: str | None  # None: any type

    def describe(self) -> str:
        if "const" in self.schema:
            return f"the value {shown(self.schema['const'])}"
        if isinstance(self.schema.get("enum"), list):
            return f"{self.type or 'values'} {shown(self.schema['enum'])}"
        return self.type or "any value"


class _TooComplex(Exception):
    """The comparison ran past its work budget or depth bound: what was exceeded, in words."""


class _Work:
    """What the walks of one comparison share: the steps taken, the depth reached, and the
    memos of what a bare `$ref` resolves to and the alternatives it makes."""

    def __init__(self) -> None:
        self.steps = 0
        self.depth = 0
        self.cuts = 0  # repeats cut so far: a memo is kept only when none was cut below
        self.expanding: set[tuple[int, str]] = set()  # (root, $ref) being expanded
        self.resolved: dict[tuple[int, str], tuple[Any, str]] = {}
        self.alternatives: dict[tuple[int, str], list[_Alt]] = {}

    def step(self, count: int = 1) -> None:
        self.steps += count
        if self.steps > WORK_BUDGET:
            raise _TooComplex(f"over {WORK_BUDGET} steps through $ref, anyOf and allOf")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooComplex(f"nested over {MAX_DEPTH} deep")


class _Walk:
    def __init__(self, old_root: Any, new_root: Any, work: _Work | None = None) -> None:
        self.old_root = old_root
        self.new_root = new_root
        self.found: list[Change] = []
        self.active: set[tuple[int, int]] = set()  # node pairs being compared (cycles end here)
        self.defs_alike: bool | None = None  # see alike()
        self.work = work or _Work()
        self.where = ("", "")  # the argument and node being compared (a too complex one's place)

    def add(
        self,
        kind: str,
        path: str,
        pointer: str,
        narrows: bool | None,
        detail: str,
        *,
        both: bool = False,
        proven: bool = True,
    ) -> None:
        """A change; `narrows` None: neither narrows nor widens (wording, a default)."""
        widens = narrows is False or both
        self.found.append(
            Change(kind, path, pointer, narrows is True or both, widens, detail, proven)
        )

    def alike(self, old: Any, new: Any) -> bool:
        """Whether two equal (`==`) nodes are written alike (`==` takes 1, 1.0 and true for one
        value, a schema does not) and each `$ref` in them finds alike nodes: there is none, or
        all go into the definitions and both roots define alike."""
        written = _written(old)
        if written != _written(new):
            return False
        refs = written.count('"$ref":')
        if not refs:
            return True
        if refs != sum(written.count(f'"$ref":"{into}') for into in _INTO_DEFS):
            return False
        if self.defs_alike is None:
            self.defs_alike = all(self._defs_alike(key) for key in DEFINITIONS)
        return self.defs_alike

    def _defs_alike(self, key: str) -> bool:
        old, new = _get(self.old_root, key), _get(self.new_root, key)
        if old is None or new is None:
            return old is new
        written = _written(old)
        refs = written.count('"$ref":')
        return (
            old == new
            and written == _written(new)
            and refs == sum(written.count(f'"$ref":"{into}') for into in _INTO_DEFS)
        )

    # -- resolving ------------------------------------------------------------------------------

    def resolved(self, node: Any, root: Any, pointer: str) -> tuple[Any, str]:
        """The node with local $refs followed (siblings of a $ref applied over its target) and
        allOf merged; and the pointer of where its body stands. A $ref being expanded already
        (a recursive schema) stays as written."""
        work = self.work
        work.step()
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#"):
            return self._resolved(node, root, pointer)
        key = (id(root), ref)
        if len(node) == 1 and key in work.resolved:
            return work.resolved[key]
        cuts = work.cuts
        found = self._resolved(node, root, pointer)
        if len(node) == 1 and work.cuts == cuts:
            work.resolved[key] = found
        return found

    def _resolved(self, node: Any, root: Any, pointer: str) -> tuple[Any, str]:
        work = self.work
        followed: list[tuple[int, str]] = []
        work.enter()
        try:
            for _ in range(MAX_REFS):
                if not isinstance(node, dict):
                    return node, pointer
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith("#"):
                    key = (id(root), ref)
                    if key in work.expanding:
                        work.cuts += 1
                        return node, pointer  # a recursive schema: compared as written
                    target = resolve(root, ref[1:], None)
                    if target is None:
                        return node, pointer  # unresolvable: compared as written
                    work.expanding.add(key)
                    followed.append(key)
                    siblings = {k: v for k, v in node.items() if k != "$ref"}
                    if isinstance(target, dict):
                        node = {**target, **siblings} if siblings else target
                    else:
                        node = target
                    pointer = ref[1:] if not siblings else pointer
                    continue
                if isinstance(node.get("allOf"), list):
                    merged = {k: v for k, v in node.items() if k != "allOf"}
                    for i, part in enumerate(node["allOf"]):
                        where = join_pointer(pointer, "allOf") + f"/{i}"
                        body, _ = self.resolved(part, root, where)
                        if body is False:
                            return False, pointer  # nothing validates
                        if isinstance(body, dict):  # true (or, in a corrupt package, not a schema)
                            merged = _merge(merged, body)  # adds nothing
                    if "$ref" in merged and "$ref" not in node:
                        return merged, pointer  # a recursive part, kept as written
                    node = merged
                    continue
                return node, pointer
            return node, pointer
        finally:
            work.expanding.difference_update(followed)
            work.depth -= 1

    def alternatives(self, node: Any, root: Any, pointer: str) -> list[_Alt]:
        work = self.work
        work.enter()
        try:
            return self._alternatives(node, root, pointer)
        finally:
            work.depth -= 1

    def _option(self, option: Any, base: dict[str, Any], root: Any, where: str) -> list[_Alt]:
        """The alternatives of one anyOf/oneOf option (with the node's other keywords, `base`,
        over it): a $ref being expanded already is one alternative, as written."""
        work = self.work
        ref = option.get("$ref") if isinstance(option, dict) else None
        if not isinstance(ref, str) or not ref.startswith("#"):
            body, where = self.resolved(option, root, where)
            if isinstance(body, dict) and base:
                body = _merge(base, body)
            return self.alternatives(body, root, where)
        key = (id(root), ref)
        if key in work.expanding:
            work.cuts += 1
            body = _merge(base, option) if base else option
            return [_Alt(body, where, None)]  # a recursive schema: compared as written
        bare = len(option) == 1 and not base
        if bare and key in work.alternatives:
            found = work.alternatives[key]
            work.step(len(found))
            return found
        cuts = work.cuts
        body, where = self.resolved(option, root, where)
        if isinstance(body, dict) and base:
            body = _merge(base, body)
        work.expanding.add(key)
        try:
            found = self.alternatives(body, root, where)
        finally:
            work.expanding.discard(key)
        if bare and work.cuts == cuts:
            work.alternatives[key] = found
        return found

    def _alternatives(self, node: Any, root: Any, pointer: str) -> list[_Alt]:
        node, pointer = self.resolved(node, root, pointer)
        if node is True or (isinstance(node, dict) and not _validating(node)):
            return [_Alt({} if node is True else node, pointer, None)]
        if not isinstance(node, dict):
            return []  # false (or garbage): nothing validates
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if isinstance(options, list):
                base = {k: v for k, v in node.items() if k != key and k not in ANNOTATIONS}
                found: list[_Alt] = []
                seen: set[tuple[str, int]] = set()
                for i, option in enumerate(options):
                    made = self._option(option, base, root, f"{pointer}/{key}/{i}")
                    self.work.step(len(made))
                    for alt in made:
                        # the same alternative reached twice (two $refs to one definition)
                        # is one alternative
                        if (alt.pointer, id(alt.schema)) not in seen:
                            seen.add((alt.pointer, id(alt.schema)))
                            found.append(alt)
                return found
        types = node.get("type")
        nullable = node.get("nullable") is True
        if isinstance(types, list):
            names = [t for t in types if isinstance(t, str)]
        elif isinstance(types, str):
            names = [types]
        elif isinstance(node.get("enum"), list) or "const" in node:
            values = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]]
            names = sorted({_type_of(v) for v in values}, key=TYPES.index)
        else:
            names = []
        if not names:
            alts = [_Alt(node, pointer, None)]
        elif len(names) == 1 and not nullable:
            alts = [_Alt(node, pointer, names[0])]
        else:
            alts = [_Alt(_only(node, name), pointer, name) for name in names]
        if nullable and "null" not in names and names:
            alts.append(_Alt({"type": "null"}, pointer, "null"))
        return alts

    # -- comparing --------------------------------------------------------------------------------

    def node(self, old: Any, new: Any, path: str, old_pointer: str, new_pointer: str) -> None:
        if old == new and self.alike(old, new):
            return  # written alike, and any $ref finds alike nodes: nothing below differs
        outer = self.where
        self.where = (path, new_pointer)
        self.work.enter()
        try:
            self._node(old, new, path, old_pointer, new_pointer)
        finally:
            self.work.depth -= 1
        self.where = outer

    def _node(self, old: Any, new: Any, path: str, old_pointer: str, new_pointer: str) -> None:
        old_body, old_at = self.resolved(old, self.old_root, old_pointer)
        new_body, new_at = self.resolved(new, self.new_root, new_pointer)
        pair = (id(old_body), id(new_body))
        if pair in self.active:
            return  # a recursive schema: this pair is being compared further up
        self.active.add(pair)
        try:
            if isinstance(old_body, dict) and isinstance(new_body, dict):
                self.annotations(old_body, new_body, path, new_at)
                if isinstance(new_body.get("oneOf"), list):
                    self.exclusive(old_body, new_body, path, new_at)
            self.union(
                self.alternatives(old_body, self.old_root, old_at),
                self.alternatives(new_body, self.new_root, new_at),
                path,
                new_at,
            )
        finally:
            self.active.discard(pair)

    def branches(self, node: dict[str, Any], root: Any, key: str, at: str) -> list[Any]:
        """The options of a node's anyOf/oneOf, each resolved, with the node's other keywords."""
        options = node.get(key)
        if not isinstance(options, list):
            return []
        base = {
            k: v for k, v in node.items() if k not in ("anyOf", "oneOf") and k not in ANNOTATIONS
        }
        found = []
        for i, option in enumerate(options):
            body, _ = self.resolved(option, root, f"{at}/{key}/{i}")
            found.append(_merge(base, body) if isinstance(body, dict) and base else body)
        return found

    def valid(self, root: Any) -> Callable[[Any, Any], bool]:
        """A check of a value against a part of a schema, its $refs resolved from `root`.
        Its patterns run in bounded time (pattern.search): one that backtracks without end
        raises Slow, which leaves the question undecided."""
        checker = _checker(_mentions(root, "patternProperties"))(
            root if isinstance(root, (dict, bool)) else {}
        )
        return lambda schema, value: bool(checker.evolve(schema=schema).is_valid(value))

    def exclusive(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        """oneOf refuses a value two branches match: a branch added or widened into another
        refuses values that were valid (proven by a value both take now, where one branch is
        as it was; else a possible narrowing)."""
        now = self.branches(new, self.new_root, "oneOf", at)
        if len(now) > MAX_BRANCHES:
            return
        was_exclusive = self.branches(old, self.old_root, "oneOf", at)
        before: dict[str, list[int]] = {}  # each branch's text: where it stood at REF
        for i, branch in enumerate(was_exclusive):
            before.setdefault(_bare(branch), []).append(i)
        valid_new, valid_old = self.valid(self.new_root), self.valid(self.old_root)
        texts = [_bare(b) for b in now]
        shown_pairs: list[tuple[int, int, Any]] = []
        undecided: list[tuple[int, int]] = []
        for i in range(len(now)):
            for j in range(i + 1, len(now)):
                # both stood at REF, as two branches (a branch written twice now is new)
                if len(before.get(texts[i], ())) > (texts[i] == texts[j]) and texts[j] in before:
                    was = (
                        was_exclusive[before[texts[i]][0]],
                        was_exclusive[before[texts[j]][-1]],
                    )
                    if overlap(*was, valid_old)[0] is not False:
                        continue  # they could meet at REF too: nothing new
                met, value = overlap(now[i], now[j], valid_new)
                if met is False:
                    continue
                # shown when the value both take now was valid at REF
                if met is True and _checks(valid_old, old, value):
                    shown_pairs.append((i, j, value))
                else:
                    undecided.append((i, j))
        # one change for the node: its first pair shown (else undecided), and how many more
        if shown_pairs:
            i, j, value = shown_pairs[0]
            more = len(shown_pairs) - 1
            said = f"oneOf branches {i} and {j} both take {shown(value)} now (valid before)"
            if more:
                said += f", and {more} more pair{'s' * (more > 1)} of branches overlap"
            self.add("exclusive", path, join_pointer(at, "oneOf") + f"/{j}", True, said)
        elif undecided:
            i, j = undecided[0]
            more = len(undecided) - 1
            said = f"oneOf branches {i} and {j} may overlap now"
            if more:
                said += f" (and {more} more pair{'s' * (more > 1)})"
            where = join_pointer(at, "oneOf") + f"/{j}"
            self.add("exclusive", path, where, True, said, proven=False)

    def annotations(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        what = f"'{path}'" if path else "the arguments"
        for key in ("title", "description"):
            if old.get(key) != new.get(key):
                change = _wording(old.get(key), new.get(key))
                self.add(
                    "description", path, join_pointer(at, key), None, f"{key} of {what} {change}"
                )
                before, after = old.get(key), new.get(key)
                if isinstance(before, str) and isinstance(after, str):
                    self.found[-1] = replace(self.found[-1], texts=(before, after))
        if old.get("examples") != new.get("examples"):
            change = _wording(old.get("examples"), new.get("examples"), quote=False)
            self.add(
                "examples", path, join_pointer(at, "examples"), None, f"examples of {what} {change}"
            )
        if path and ("default" in old or "default" in new):
            before, after = old.get("default", _NONE), new.get("default", _NONE)
            if before is _NONE:
                self.add(
                    "default_added",
                    path,
                    join_pointer(at, "default"),
                    None,
                    f"default {shown(after)} added",
                )
            elif after is _NONE:
                self.add("default", path, at, None, f"default {shown(before)} removed")
            elif canonical(before) != canonical(after):
                self.add(
                    "default",
                    path,
                    join_pointer(at, "default"),
                    None,
                    f"default changed from {shown(before)} to {shown(after)}",
                )

    def union(self, old: list[_Alt], new: list[_Alt], path: str, at: str) -> None:
        if len(old) == 1 and len(new) == 1:
            self.alt(old[0], new[0], path)
            return
        used: set[int] = set()
        for before in old:
            candidates = [(i, after) for i, after in enumerate(new) if _covers(before, after)]
            if not candidates:
                gone = (
                    "null (it is no longer nullable)"
                    if before.type == "null"
                    else before.describe()
                )
                self.add("type", path, at, True, f"no longer accepts {gone}")
                continue
            same = [
                (i, after) for i, after in candidates if self.alike(before.schema, after.schema)
            ]
            if same or len(candidates) == 1:  # nothing to choose between: compared once
                best_i, best = (same or candidates)[0]
                used.add(best_i)
                self.alt(before, best, path)
                continue
            # the one that narrows least; its trial's changes are the comparison's (not walked
            # again)
            tried = [(i, self._trial(before, after, path)) for i, after in candidates]
            best_i, found = min(tried, key=lambda trial: sum(c.narrows for c in trial[1]))
            used.add(best_i)
            self.found += found
        for i, after in enumerate(new):
            if i in used:
                continue
            covering = [before for before in old if _covers(after, before)]
            if not covering:
                added = "null (it is nullable now)" if after.type == "null" else after.describe()
                self.add("type", path, after.pointer, False, f"now also accepts {added}")
                continue
            if any(self.alike(before.schema, after.schema) for before in covering):
                continue  # one written alike: it accepts nothing beyond
            # a new alternative of a type already accepted: what it accepts beyond the old
            # alternative closest to it
            trials = [self._trial(before, after, path) for before in covering]
            closest = min(trials, key=lambda found: sum(change.widens for change in found))
            # what it takes beyond: a widening only (the old alternatives are matched above)
            self.found += [replace(c, narrows=False) for c in closest if c.widens]

    def _trial(self, old: _Alt, new: _Alt, path: str) -> list[Change]:
        trial = _Walk(self.old_root, self.new_root, self.work)
        trial.where = self.where
        trial.active = set(self.active)
        trial.defs_alike = self.defs_alike
        trial.alt(old, new, path)
        return trial.found

    def alt(self, old: _Alt, new: _Alt, path: str) -> None:
        at = new.pointer
        if not _same_annotations(old.schema, new.schema):  # an anyOf branch's own wording
            self.annotations(old.schema, new.schema, path, at)
        if old.type != new.type:
            if old.type is None:
                self.add("type", path, at, True, f"type narrowed from any value to {new.type}")
            elif new.type is None:
                self.add("type", path, at, False, f"type widened from {old.type} to any value")
            elif (old.type, new.type) == ("integer", "number"):
                self.add("type", path, at, False, "type widened from integer to number")
            elif (old.type, new.type) == ("number", "integer"):
                self.add("type", path, at, True, "type narrowed from number to integer")
            else:
                self.add(
                    "type", path, at, True, f"type changed from {old.type} to {new.type}", both=True
                )
                return
        self.values(old.schema, new.schema, path, at)
        self.bounds(old.schema, new.schema, path, at)
        self.opaque(old.schema, new.schema, path, at)
        self.object(old, new, path)
        self.array(old, new, path)

    def values(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        before, after = _values(old), _values(new)
        if before == after:
            return
        where = join_pointer(at, "enum" if "enum" in new else "const")
        if after is not None and before is None:
            listed = ", ".join(shown(v) for v in after.values())
            self.add("enum", path, where, True, f"now limited to {listed}")
        elif after is None and before is not None:
            self.add("enum", path, at, False, "no longer limited to a list of values")
        elif before is not None and after is not None:
            gone = [v for k, v in before.items() if k not in after]
            added = [v for k, v in after.items() if k not in before]
            if gone:
                listed = ", ".join(shown(v) for v in gone)
                self.add(
                    "enum", path, where, True, f"value{'s' * (len(gone) > 1)} {listed} removed"
                )
            if added:
                listed = ", ".join(shown(v) for v in added)
                self.add(
                    "enum", path, where, False, f"value{'s' * (len(added) > 1)} {listed} added"
                )

    def bounds(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        present = old.keys() | new.keys()
        if present.isdisjoint(BOUNDED):
            return
        paired = self.paired_bounds(old, new, path, at)
        for keys, rising in ((LOWER, True), (UPPER, False)):
            for key in keys:
                if key not in present or key in paired:
                    continue
                before, after = _number(old.get(key)), _number(new.get(key))
                if before == after:
                    continue
                where = join_pointer(at, key)
                if before is None:
                    self.add("bound", path, where, True, f"{key} {shown(new[key])} added")
                elif after is None:
                    self.add("bound", path, at, False, f"{key} {shown(old[key])} removed")
                else:
                    narrows = after > before if rising else after < before
                    verb = "tightened" if narrows else "loosened"
                    self.add(
                        "bound",
                        path,
                        where,
                        narrows,
                        f"{key} {verb} from {shown(old[key])} to {shown(new[key])}",
                    )
        before, after = _number(old.get("multipleOf")), _number(new.get("multipleOf"))
        if before != after:
            where = join_pointer(at, "multipleOf")
            if after is None:
                self.add("bound", path, at, False, f"multipleOf {shown(before)} removed")
            elif before is None:
                self.add("bound", path, where, True, f"multipleOf {shown(after)} added")
            else:
                # every old multiple stays one when the new step divides the old; every new
                # multiple was one when the old step divides the new
                narrows = not _divides(after, before)
                self.add(
                    "bound",
                    path,
                    where,
                    narrows,
                    f"multipleOf changed from {shown(before)} to {shown(after)}",
                    both=narrows and not _divides(before, after),
                )
        self.format(old, new, path, at)
        before, after = old.get("pattern"), new.get("pattern")
        where = join_pointer(at, "pattern")
        if before == after:
            pass
        elif after is None:
            self.add("bound", path, at, False, f"pattern {shown(before)} removed")
        elif before is None:
            self.add("bound", path, where, True, f"pattern {shown(after)} added")
        elif isinstance(before, str) and isinstance(after, str):
            self.pattern(before, after, path, where)
        else:
            moved = f"pattern changed from {shown(before)} to {shown(after)}"
            self.add("bound", path, where, True, moved, both=True)
        if bool(old.get("uniqueItems")) != bool(new.get("uniqueItems")):
            narrows = bool(new.get("uniqueItems"))
            self.add(
                "bound",
                path,
                join_pointer(at, "uniqueItems"),
                narrows,
                "items must be unique now" if narrows else "items need no longer be unique",
            )

    def format(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        """A changed format: a narrowing only where a call is refused for it now (see
        ASSERTED_FORMATS), a widening where one was; else an annotation (kind "format")."""
        before, after = old.get("format"), new.get("format")
        if before == after:
            return
        checked_before, checked_after = _checked(old), _checked(new)
        where = join_pointer(at, "format") if after is not None else at
        if after is None:
            said = f"format {shown(before)} removed"
        elif before is None:
            said = f"format {shown(after)} added"
        else:
            said = f"format changed from {shown(before)} to {shown(after)}"
        if not checked_before and not checked_after:
            self.add("format", path, where, None, said + " (an annotation: nothing checks it)")
        elif not checked_after:
            self.add("bound", path, where, False, said)
        else:
            self.add("bound", path, where, True, said, both=checked_before)

    def paired_bounds(
        self, old: dict[str, Any], new: dict[str, Any], path: str, at: str
    ) -> set[str]:
        """A bound moved between minimum and exclusiveMinimum (or the maxima): compared as one
        bound (`minimum: 10` -> `exclusiveMinimum: 9` takes every value it did, and 9.5 too).
        The keys settled here."""
        settled: set[str] = set()
        for inclusive, exclusive, rising in (
            ("minimum", "exclusiveMinimum", True),
            ("maximum", "exclusiveMaximum", False),
        ):
            before, after = _edge(old, inclusive, exclusive), _edge(new, inclusive, exclusive)
            if before is None or after is None or before[2] == after[2]:
                continue  # a bound added, removed, or kept under its keyword: compared below
            settled |= {inclusive, exclusive}
            (was, was_open, was_key), (now, now_open, now_key) = before, after
            if rising:
                narrows = now > was or (now == was and now_open and not was_open)
                widens = now < was or (now == was and was_open and not now_open)
            else:
                narrows = now < was or (now == was and now_open and not was_open)
                widens = now > was or (now == was and was_open and not now_open)
            if not narrows and not widens:
                continue
            verb = "tightened" if narrows else "loosened"
            self.add(
                "bound",
                path,
                join_pointer(at, now_key),
                narrows,
                f"{verb} from {was_key} {shown(was)} to {now_key} {shown(now)}",
            )
        return settled

    def pattern(self, before: str, after: str, path: str, at: str) -> None:
        """A changed pattern: a loosening when proven, a narrowing when a string shows it, else
        a possible narrowing (not proven either way)."""
        wider, witness = loosened(before, after)
        narrower, _ = loosened(after, before)
        moved = f"pattern changed from {shown(before)} to {shown(after)}"
        if wider and narrower:
            return  # the same strings, written otherwise
        if wider:
            self.add(
                "bound", path, at, False, f"pattern loosened from {shown(before)} to {shown(after)}"
            )
        elif witness is not None:
            self.add(
                "bound",
                path,
                at,
                True,
                f"{moved} ({shown(witness)} matched it, and does not now)",
                both=narrower is not True,
            )
        else:
            self.add(
                "bound",
                path,
                at,
                True,
                f"{moved} (not proven to accept what it did)",
                both=narrower is not True,
                proven=False,
            )

    def opaque(self, old: dict[str, Any], new: dict[str, Any], path: str, at: str) -> None:
        present = old.keys() | new.keys()
        for key in OPAQUE:
            if key not in present:
                continue
            if key in old and key in new and canonical(old[key]) == canonical(new[key]):
                continue
            if key not in new:
                self.add("bound", path, at, False, f"{key} removed")
            else:
                verb = "added" if key not in old else "changed"
                self.add(
                    "bound",
                    path,
                    join_pointer(at, key),
                    True,
                    f"{key} {verb} (not proven to accept what it did)",
                    both=key in old,
                )

    def object(self, old_alt: _Alt, new_alt: _Alt, path: str) -> None:
        old, new, at = old_alt.schema, new_alt.schema, new_alt.pointer
        if new_alt.type not in (None, "object") or old_alt.type not in (None, "object"):
            return
        before: dict[str, Any] = _properties(old)
        after: dict[str, Any] = _properties(new)
        old_required = set(_strings(old.get("required")))
        new_required = set(_strings(new.get("required")))
        closed = _closed(new)
        props = join_pointer(at, "properties")
        old_props = join_pointer(old_alt.pointer, "properties")
        for name in before:
            sub = child(path, name)
            if name not in after:
                # a value without it was refused while it was required: it goes through now
                loosened = name in old_required and name not in new_required
                if closed:
                    self.add(
                        "removed_closed",
                        sub,
                        join_pointer(props, name),
                        True,
                        "removed, and the object refuses unknown properties",
                        both=loosened,
                    )
                else:
                    self.add(
                        "removed_open",
                        sub,
                        join_pointer(props, name),
                        True,
                        "removed; a value sent for it is ignored now",
                        both=loosened,
                    )
                continue
            self.node(
                before[name],
                after[name],
                sub,
                join_pointer(old_props, name),
                join_pointer(props, name),
            )
            if name not in old_required and name in new_required:
                self.add(
                    "made_required",
                    sub,
                    join_pointer(at, "required"),
                    True,
                    "optional before, required now",
                )
            elif name in old_required and name not in new_required:
                self.add(
                    "made_optional",
                    sub,
                    join_pointer(props, name),
                    False,
                    "required before, optional now",
                )
        for name in after:
            if name in before:
                continue
            if name in new_required:
                self.add(
                    "required_added",
                    child(path, name),
                    join_pointer(props, name),
                    True,
                    "new and required",
                    both=_closed(old),  # values with it were refused before, too
                )
            else:
                self.add(
                    "optional_added",
                    child(path, name),
                    join_pointer(props, name),
                    False,
                    "new and optional",
                )
        for name in sorted(new_required - old_required - set(after) - set(before)):
            self.add(
                "required_added",
                child(path, name),
                join_pointer(at, "required"),
                True,
                "required now (the object names it without a schema)",
            )
        # shut: properties neither listed nor matched by patternProperties refused (closed: by
        # name alone, what a removed property meets)
        shut, was_shut = _shut(new), _shut(old)
        listed = "list" if not new.get("patternProperties") else "list or match by pattern"
        if shut and not was_shut:
            self.add("closed", path, at, True, f"refuses properties it does not {listed} now")
        elif was_shut and not shut:
            self.add("closed", path, at, False, "takes properties it does not list now")
        extra_old, extra_new = old.get("additionalProperties"), new.get("additionalProperties")
        if isinstance(extra_old, dict) and isinstance(extra_new, dict):
            self.node(
                extra_old,
                extra_new,
                child(path, "*"),
                join_pointer(old_alt.pointer, "additionalProperties"),
                join_pointer(at, "additionalProperties"),
            )
        elif isinstance(extra_new, dict) and extra_old in (None, True) and _validating(extra_new):
            self.add(
                "bound",
                child(path, "*"),
                join_pointer(at, "additionalProperties"),
                True,
                "properties it does not list must match a schema now",
            )

    def array(self, old_alt: _Alt, new_alt: _Alt, path: str) -> None:
        old, new, at = old_alt.schema, new_alt.schema, new_alt.pointer
        if new_alt.type not in (None, "array") or old_alt.type not in (None, "array"):
            return
        before, after = old.get("items"), new.get("items")
        if isinstance(before, (dict, bool)) or isinstance(after, (dict, bool)):
            self.node(
                before if isinstance(before, (dict, bool)) else True,
                after if isinstance(after, (dict, bool)) else True,
                f"{path}[]",
                join_pointer(old_alt.pointer, "items"),
                join_pointer(at, "items"),
            )
        old_tuple, new_tuple = old.get("prefixItems"), new.get("prefixItems")
        if isinstance(old_tuple, list) or isinstance(new_tuple, list):
            old_tuple = old_tuple if isinstance(old_tuple, list) else []
            new_tuple = new_tuple if isinstance(new_tuple, list) else []
            for i in range(max(len(old_tuple), len(new_tuple))):
                self.node(
                    old_tuple[i] if i < len(old_tuple) else True,
                    new_tuple[i] if i < len(new_tuple) else True,
                    f"{path}[{i}]",
                    f"{old_alt.pointer}/prefixItems/{i}",
                    f"{at}/prefixItems/{i}" if i < len(new_tuple) else at,
                )


_NONE: Any = object()


def _wording(before: Any, after: Any, *, quote: bool = True) -> str:
    if before is None:
        return "added"
    if after is None:
        return "removed"
    if quote and isinstance(before, str) and isinstance(after, str):
        return f"changed from {shown(before)} to {shown(after)}"
    return "changed"


def _same_annotations(old: dict[str, Any], new: dict[str, Any]) -> bool:
    keys = ("title", "description", "examples", "default")
    return all(old.get(key, _NONE) == new.get(key, _NONE) for key in keys)


def _checks(valid: Callable[[Any, Any], bool], schema: Any, value: Any) -> bool:
    try:
        return valid(schema, value)
    except Exception:  # noqa: BLE001 - a schema jsonschema cannot check: not shown
        return False


def _edge(node: dict[str, Any], inclusive: str, exclusive: str) -> tuple[float, bool, str] | None:
    """A node's one bound on a side: (value, whether excluded, its keyword); None when it has
    none or both keywords (compared keyword by keyword then)."""
    a, b = _number(node.get(inclusive)), _number(node.get(exclusive))
    if (a is None) == (b is None):
        return None
    return (a, False, inclusive) if a is not None else (b, True, exclusive)  # type: ignore[return-value]


def _bare(branch: Any) -> str:
    """A oneOf branch as text, without its own wording (a branch reworded is the same one)."""
    if isinstance(branch, dict):
        branch = {
            k: v for k, v in branch.items() if k not in ANNOTATIONS and not k.startswith("x-")
        }
    return canonical(branch)


def _written(node: Any) -> str:
    """A node as JSON (quotes inside strings escaped: '"$ref":' is only ever a key)."""
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"))


DEFINITIONS = ("$defs", "definitions")
_INTO_DEFS = tuple(f"#/{key}/" for key in DEFINITIONS)


def _get(root: Any, key: str) -> Any:
    return root.get(key) if isinstance(root, dict) else None


def _validating(node: dict[str, Any]) -> bool:
    """Whether a schema object holds any keyword that restricts values."""
    return any(key not in ANNOTATIONS and not key.startswith("x-") for key in node)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Two schemas that must both hold, as one (allOf, or a $ref with siblings): properties and
    required joined, any other keyword of `extra` over `base`'s."""
    merged = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(value, dict) and isinstance(base.get(key), dict):
            joined = dict(base[key])
            for name, schema in value.items():
                joined[name] = {"allOf": [joined[name], schema]} if name in joined else schema
            merged[key] = joined
        elif key == "required" and isinstance(value, list) and isinstance(base.get(key), list):
            merged[key] = [*base[key], *(v for v in value if v not in base[key])]
        elif key in _LOWER and _number(value) is not None and _number(base.get(key)) is not None:
            merged[key] = max(base[key], value)  # both hold: the tighter bound
        elif key in _UPPER and _number(value) is not None and _number(base.get(key)) is not None:
            merged[key] = min(base[key], value)
        elif key == "enum" and isinstance(value, list) and isinstance(base.get(key), list):
            common = {canonical(b) for b in base[key]}
            merged[key] = [v for v in value if canonical(v) in common]
        else:
            merged[key] = value
    return merged


_LOWER = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)


def _only(node: dict[str, Any], name: str) -> dict[str, Any]:
    """One type's alternative of a node with several types (its enum, those of that type)."""
    part = {k: v for k, v in node.items() if k not in ("nullable",)}
    part["type"] = name
    if name == "string" and any(t not in ("string", "null") for t in _strings(node.get("type"))):
        part[_IN_UNION] = True  # the model puts no pattern of a format on it (see _checked)
    if isinstance(node.get("enum"), list):
        part["enum"] = [
            v
            for v in node["enum"]
            if _type_of(v) == name or (name == "number" and _type_of(v) == "integer")
        ]
    if "const" in node and _type_of(node["const"]) != name:
        part.pop("const")
    return part


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _covers(old: _Alt, new: _Alt) -> bool:
    """Whether new's type takes every value of old's type."""
    if new.type is None or old.type == new.type:
        return True
    return old.type == "integer" and new.type == "number"


def _values(node: dict[str, Any]) -> dict[str, Any] | None:
    if "const" in node:
        return {canonical(node["const"]): node["const"]}
    if isinstance(node.get("enum"), list):
        return {canonical(v): v for v in node["enum"]}
    return None


def _divides(step: float, value: float) -> bool:
    if not step:
        return False
    try:
        ratio = value / step
    except OverflowError:  # an integer of hundreds of digits over a small step
        return False
    # a step of inf or nan (JSON's 1e400, NaN) divides nothing: no proof either way
    return math.isfinite(ratio) and abs(ratio - round(ratio)) < 1e-9


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    found = node.get("properties")
    return found if isinstance(found, dict) else {}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


def _checked(node: dict[str, Any]) -> bool:
    """Whether a node's format refuses values (see ASSERTED_FORMATS): a string's."""
    kind, types = node.get("format"), node.get("type")
    if not isinstance(kind, str) or kind not in ASSERTED_FORMATS:
        return False
    if (
        types is not None
        and types != "string"
        and not (isinstance(types, list) and "string" in types)
    ):
        return False
    if kind in PATTERN_FORMATS:  # _only() marks a union's string, which is typed alone
        return takes_pattern(node) and _IN_UNION not in node
    return not (kind in _TYPED_FORMATS and isinstance(node.get("default"), str))


def _closed(node: dict[str, Any]) -> bool:
    if node.get("patternProperties"):
        return False
    return _shut(node)


def _shut(node: dict[str, Any]) -> bool:
    return node.get("additionalProperties") is False or node.get("unevaluatedProperties") is False


def deprecated_arguments(schema: Any, at: str = "") -> Iterator[str]:
    """The pointers of properties marked deprecated (through properties and items)."""
    if not isinstance(schema, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            where = join_pointer(join_pointer(at, "properties"), name)
            if isinstance(sub, dict) and sub.get("deprecated") is True:
                yield where
            yield from deprecated_arguments(sub, where)
    items = schema.get("items")
    if isinstance(items, dict):
        yield from deprecated_arguments(items, join_pointer(at, "items"))


@cache
def _checker(with_patterns: bool) -> Any:
    """Draft 2020-12's validator with `pattern`, `patternProperties` and
    `additionalProperties` matching through pattern.search (jsonschema's own use `re`, which a
    pattern such as `^(a+)+$` holds for minutes); `unevaluatedProperties` beside
    patternProperties (matched by `re` deep inside jsonschema) raises Slow: undecided."""
    import jsonschema
    from jsonschema import ValidationError, validators

    def pattern(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(wanted, instance):
            yield ValidationError(f"{instance!r} does not match {wanted!r}")

    def pattern_properties(
        validator: Any, wanted: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for name, subschema in wanted.items():
            for key, value in instance.items():
                if search(name, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=name)

    def additional(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        named, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        others = [
            key
            for key in instance
            if key not in named and not any(search(p, key) for p in patterns)
        ]
        if validator.is_type(extra, "object"):
            for key in others:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and others:
            yield ValidationError(f"additional properties are not allowed ({others!r})")

    base = jsonschema.Draft202012Validator
    keywords: dict[str, Any] = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional,
    }
    if with_patterns:

        def unevaluated(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if validator.is_type(instance, "object") and instance:
                raise Slow("unevaluatedProperties beside patternProperties")
            return iter(())

        keywords["unevaluatedProperties"] = unevaluated
    return validators.extend(base, keywords)  # type: ignore[no-untyped-call]


def _mentions(node: Any, key: str) -> bool:
    """Whether a key appears anywhere in a schema."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
