"""What the last successful build made, reused by the next one while it still holds. Light on
purpose (no stage is imported): it runs before the build's workers start.

The build state (cache.py) records each spec's unit: its key (the spec's bytes and those of every
file its $refs reach), its diagnostics and ToolInfo, its model's memo key, and where its entry
stands in each provider file. A unit is reused when all of these still hold:
- the state was written under the same build key (configuration, generator, working folder);
- the spec and every file it reaches hash to what its key was made from;
- the memo still holds its model;
- each provider file it has an entry in still hashes to what the last build wrote there, so
  the entry is taken back from that file, byte for byte.
Anything else is made afresh, so a reused unit is always what a fresh one would be. The
package's templated files are reused the same way, under a key of everything they show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.incremental.cache import Memo, Snapshot, canonical, sha, unit_key
from toolnexus_gen.ir import Contributed, PyNames, ToolInfo, Unit


class Previous:
    """The last build under this build key, or nothing (every spec is then made afresh)."""

    def __init__(
        self,
        options: BuildOptions,
        inputs: Snapshot,
        state: dict[str, Any] | None,
        memo: Memo,
        kept: dict[str, Any],
    ) -> None:
        self.options = options
        self.inputs = inputs
        self.memo = memo
        self.state = state or {}
        self.kept = kept  # cache.load_reuse
        self._texts: dict[str, str | None] = {}

    def units(self, paths: Sequence[Path], contributed: Sequence[Contributed] = ()) -> list[Unit]:
        """The reusable units among these spec files and these specs the sources made."""
        found = []
        for path in paths:
            rel = path.relative_to(self.options.specs).as_posix()
            unit = self._unit(rel, self._sha(rel))
            if unit is not None:
                found.append(unit)
        for spec in contributed:  # made in memory: its bytes are what its key was made from
            unit = self._unit(spec.rel, sha(spec.document.raw))
            if unit is not None:
                found.append(unit)
        return found

    def package(self, keys: dict[str, Any]) -> dict[str, str]:
        """The last build's package files whose key (what rendering them reads:
        codegen.package.package_keys) is the same now; the others must be rendered."""
        recorded = self.kept.get("package")
        if not isinstance(recorded, dict):
            return {}
        files = {}
        for name, key in keys.items():
            if recorded.get(name) != sha(canonical(key)):
                continue
            text = self.text(name)
            if text is not None:
                files[name] = text
        return files

    def matches(self, name: str, key: Any) -> bool:
        """Whether the last build recorded `key` under `name` (see records)."""
        recorded = self.kept.get("package")
        return isinstance(recorded, dict) and recorded.get(name) == sha(canonical(key))

    def _unit(self, rel: str, spec: str | None) -> Unit | None:
        record = self.kept.get("units", {}).get(rel)
        if record is None:
            return None
        reached = []
        for path in record["reached"]:
            digest = self._sha(path)
            if digest is None:
                return None
            reached.append((path, digest))
        if spec is None or unit_key(rel, spec, reached) != record["key"]:
            return None
        if self.memo.model(record["model"]) is None:
            return None
        entries = {}
        for file, (start, end) in record["entries"].items():
            text = self.text(file)
            if text is None:
                return None
            entries[file] = text[start:end]
        return Unit(
            rel,
            record["key"],
            tuple(record["reached"]),
            tuple(_diagnostic(item) for item in record["diagnostics"]),
            _info(record["info"]),
            entries,
            record["model"],
            None,
            record.get("model_input"),
        )

    def _sha(self, rel: str) -> str | None:
        """A spec-folder file's SHA-256 now (from the build's snapshot), None when it is gone."""
        if rel in self.inputs.inputs:
            digest: str = self.inputs.inputs[rel][2]
            return digest
        try:
            return sha((self.options.specs / rel).read_bytes())
        except OSError:
            return None

    def text(self, name: str) -> str | None:
        """An output file's text, if it is still exactly what the last build wrote."""
        if name not in self._texts:
            self._texts[name] = None
            recorded = self.state.get("outputs", {}).get(name)
            try:
                data = (self.options.out / name).read_bytes()
            except OSError:
                return None
            if recorded is not None and sha(data) == recorded[2]:
                self._texts[name] = data.decode("utf-8")
        return self._texts[name]


def records(
    units: Sequence[Unit],
    layout: dict[str, dict[str, tuple[int, int]]],
    package_keys: dict[str, Any],
) -> dict[str, Any]:
    """What the build state keeps so that the next build can reuse this one's work
    (`package_keys`: what each package Python file was rendered from)."""
    kept = {}
    for unit in units:
        assert unit.info is not None and unit.model_key is not None  # a build with no error
        kept[unit.rel] = {
            "key": unit.key,
            "reached": list(unit.reached),
            "diagnostics": [_diagnostic_record(d) for d in unit.diagnostics],
            "info": _info_record(unit.info),
            "model": unit.model_key,
            "model_input": unit.model_input,
            "entries": {file: layout[file][unit.rel] for file in unit.entries},
        }
    package = {name: sha(canonical(key)) for name, key in package_keys.items()}
    return {"units": kept, "package": package}


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


def _info(item: dict[str, Any]) -> ToolInfo:
    values: dict[str, Any] = {}
    for f in fields(ToolInfo):
        value = item[f.name]
        if f.name == "python":
            value = PyNames(*value)
        elif isinstance(value, list):
            value = (
                frozenset(value)
                if f.name == "targets"
                else tuple(tuple(v) if isinstance(v, list) else v for v in value)
            )
        values[f.name] = value
    return ToolInfo(**values)
