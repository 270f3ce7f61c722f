"""What the last successful build made, reused by the next one while it still holds. Light on
purpose (no stage is imported): it runs before the build's workers start.

The build state (cache.py) records each spec's unit: its key (the spec's bytes and those of every
file its $refs reach), its diagnostics and ToolInfo, its model's memo key, and where its entry
stands in each provider file. A unit is reused when all of these still hold:
- the state was written under the same build key (configuration, generator, working folder);
- the spec and every file it reaches hash to what its key was made from;
- the memo still holds its model;
- each provider file it has an entry in still holds what the last build wrote there (its
  size and mtime are the recorded ones, as the no-op build trusts; `--check` hashes it), so
  the entry is taken back from that file, byte for byte.
Anything else is made afresh, so a reused unit is always what a fresh one would be. The
package's templated files are reused the same way, under a key of everything they show (the
pipeline compares the keys; the plan hands it the last build's keys and files).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Contributed, Packed, PyNames, ToolInfo, Unit
from toolnexus_gen.memo import Memo, sha, unit_key


class Texts:
    """The last build's output files, each read (or taken from memory) at most once, and only
    when it is still exactly what that build wrote."""

    def __init__(
        self,
        out: Path,
        outputs: dict[str, list[Any]],
        written: dict[str, str] | None = None,
        exact: bool = False,
    ) -> None:
        self.out = out
        self.outputs = outputs  # the record: [size, mtime_ns, SHA-256] of each file
        self.written = written  # the files as the last build in this process wrote them
        # hash every file (`--check`); else a file whose size and mtime are the recorded ones
        # holds the recorded bytes: the trust the no-op build and fs.output's write place in stat
        self.exact = exact
        self.read: dict[str, str | None] = {}

    def get(self, name: str) -> str | None:
        if self.written is not None:
            return self.written.get(name)
        if name not in self.read:
            self.read[name] = None
            recorded = self.outputs.get(name)
            if recorded is None:
                return None
            try:
                with open(os.path.join(self.out, name), "rb") as handle:
                    stat = os.fstat(handle.fileno())
                    data = handle.read()
            except OSError:
                return None
            same = not self.exact and [stat.st_size, stat.st_mtime_ns] == recorded[:2]
            if same or sha(data) == recorded[2]:
                self.read[name] = data.decode("utf-8")
        return self.read[name]


def reusable_units(
    specs: Path,
    digests: dict[str, list[Any]],
    kept: dict[str, Any],
    memo: Memo,
    texts: Texts,
    rels: Sequence[str],
    contributed: Sequence[Contributed] = (),
    *,
    entries: bool = True,
    in_memory: dict[str, Unit] | None = None,
    checked: dict[str, Any] | None = None,
    verified: dict[str, Any] | None = None,
) -> list[Unit]:
    """The reusable units among these spec files (relative to the spec folder) and these specs
    the sources made (`digests`: the spec folder's snapshot, `kept`: units.json, `in_memory`:
    the units as the last build in this process had them, so a reused one is not read back
    from its record; `checked`: the digests each record's key was found made of then, so the
    key need not be made again while they hold; `verified` gets this build's). `entries=False`: units without their provider entries, whose model need
    not be in the memo (what `list` reads: diagnostics and ToolInfo, never rendered)."""
    records = kept.get("units", {})
    layout = sorted(kept.get("layout", {}).items()) if entries else []
    had, checked = in_memory or {}, checked or {}
    verified = {} if verified is None else verified

    def digest(rel: str) -> str | None:  # a spec-folder file's SHA-256 now, None when gone
        if rel in digests:
            found: str = digests[rel][2]
            return found
        try:
            return sha((specs / rel).read_bytes())
        except OSError:
            return None

    def unit(rel: str, spec: str | None) -> Unit | None:
        record = records.get(rel)
        if record is None or spec is None:
            return None
        reached = []
        for path in record["reached"]:
            found = digest(path)
            if found is None:
                return None
            reached.append((path, found))
        made_of = (rel, spec, *(found for _, found in reached))
        inputs = (record["key"], spec, made_of[2:])
        # the key is made from these digests: the same digests, the same key (found so before,
        # or recorded with the key as what it was made from)
        if (
            checked.get(rel) != inputs
            and record.get("made_of") != list(made_of)
            and unit_key(rel, spec, reached) != record["key"]
        ):
            return None
        verified[rel] = inputs
        if entries and memo.model(record["model"]) is None:
            return None
        for key in record.get("passed", ()):  # kept in the memo while it holds them
            memo.is_valid(key)
        known = had.get(rel)
        if known is not None and known.key == record["key"]:
            return known  # what the record would give, its entries as they were written
        taken: dict[str, str | Packed] = {}
        for file, places in layout:  # where its entry stands in each provider file
            place = places.get(rel)
            if place is None:
                continue
            text = texts.get(file)
            if text is None:
                return None
            taken[file] = text[place[0] : place[1]]
        return Unit(
            rel,
            record["key"],
            tuple(record["reached"]),
            tuple(_diagnostic(item) for item in record["diagnostics"]),
            _info(record["info"]),
            taken,
            record["model"],
            None,
            record.get("model_input"),
            tuple(record.get("passed", ())),
            made_of,
        )

    found = []
    for rel in rels:
        made = unit(rel, digest(rel))
        if made is not None:
            found.append(made)
    for spec in contributed:  # made in memory: its bytes are what its key was made from
        made = unit(spec.rel, sha(spec.document.raw))
        if made is not None:
            found.append(made)
    return found


def records(
    units: Sequence[Unit],
    layout: dict[str, dict[str, tuple[int, int]]],
    package: dict[str, str],
    before: dict[str, Any],
) -> dict[str, Any]:
    """What the build state keeps so that the next build can reuse this one's work
    (`package`: the digest of what each package Python file was rendered from (its key,
    memo.digest_each); `layout`: where each
    unit's entry stands in each provider file; `before`: the last build's records, whose units
    were made from the same inputs when their keys match: such a record is kept as it is, the
    same object, so that its encoding is kept too: cache.save_state)."""
    kept = {}
    for unit in units:
        assert unit.info is not None and unit.model_key is not None  # a build with no error
        old = before.get(unit.rel)
        if old is not None and old["key"] == unit.key and old["model"] == unit.model_key:
            kept[unit.rel] = old
            continue
        kept[unit.rel] = {
            "key": unit.key,
            "reached": list(unit.reached),
            "diagnostics": [_diagnostic_record(d) for d in unit.diagnostics],
            "info": _info_record(unit.info),
            "model": unit.model_key,
            "model_input": unit.model_input,
            "passed": list(unit.passed),
            "made_of": list(unit.made_of),
        }
    return {"units": kept, "package": package, "layout": layout}


def _diagnostic_record(d: Diagnostic) -> list[Any]:
    return [d.path, d.line, d.col, d.code, d.message, d.severity.value, d.pointer, d.target]


def _diagnostic(item: list[Any]) -> Diagnostic:
    path, line, col, code, message, severity, pointer, target = item
    return Diagnostic(path, line, col, code, message, Severity(severity), pointer, target)


def _info_record(info: ToolInfo) -> dict[str, Any]:
    """A ToolInfo as JSON: each field by name (tuples and sets as lists), so a new field needs
    no change here."""
    return {f.name: _plain(getattr(info, f.name)) for f in fields(ToolInfo)}


def _plain(value: Any) -> Any:
    if isinstance(value, PyNames):
        return [value.method, value.model, value.module]
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


_INFO_FIELDS = tuple(f.name for f in fields(ToolInfo))
# the fields _plain writes as lists, but for python (PyNames) and targets (a set)
_SEQUENCES = tuple(
    f.name for f in fields(ToolInfo) if "tuple" in str(f.type) and f.name != "python"
)


def _info(item: dict[str, Any]) -> ToolInfo:
    values = {name: item[name] for name in _INFO_FIELDS}
    for name in _SEQUENCES:
        value = values[name]
        # a field's items are all lists (pairs...) or none are
        values[name] = tuple(map(tuple, value) if value and type(value[0]) is list else value)
    targets = values["targets"]
    if targets is not None:
        values["targets"] = frozenset(targets)
    values["python"] = PyNames(*values["python"])
    return ToolInfo(**values)
