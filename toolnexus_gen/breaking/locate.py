"""Where a finding points: the spec of the tool as it is now, at the line and column of what
changed (a property, `required`, the description), or of its name when that part of the spec is
not written there (a built-in's setting, a skill, a key a transform added). A removed tool has
no place. Only the specs of tools with findings are read again, and of a JSON spec only the
parts on the way to what the findings point at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from toolnexus_gen.breaking.rules import Finding
from toolnexus_gen.fs.paths import SPEC_SUFFIXES
from toolnexus_gen.ir import Positions, ToolInfo


def locate(found: Iterable[Finding], infos: dict[str, ToolInfo]) -> list[Finding]:
    found = list(found)
    wanted: dict[str, set[str]] = {}  # spec file -> the pointers its findings need
    for finding in found:
        info = _placed(finding, infos)
        if info is not None and finding.at is not None:
            wanted.setdefault(info.display, set()).update(_pointers(*finding.at))
    positions = {display: _positions(display, pointers) for display, pointers in wanted.items()}
    placed = []
    for finding in found:
        info = _placed(finding, infos)
        if info is None or finding.at is None:
            placed.append(finding)  # a removed tool: no place
            continue
        line, col = _place(positions[info.display], info, *finding.at)
        placed.append(replace(finding, path=info.display, line=line, col=col))
    return placed


def _placed(finding: Finding, infos: dict[str, ToolInfo]) -> ToolInfo | None:
    """The tool a finding is to be placed in (None: it has no place, or has one already)."""
    if finding.at is None or finding.path is not None:
        return None
    return infos.get(finding.tool)


def _full(key: str, pointer: str, bare: bool) -> str:
    """The pointer in the spec file: a spec that is its arguments' schema (no `input_schema`
    key) holds the schema's parts at its top."""
    if key == "name":
        return "/name"
    return pointer if bare and key == "input_schema" else f"/{key}{pointer}"


def _pointers(key: str, pointer: str) -> tuple[str, ...]:
    return ("/input_schema", _full(key, pointer, False), _full(key, pointer, True))


def _positions(display: str, pointers: set[str]) -> Positions | None:
    path = Path(display)
    if path.suffix not in SPEC_SUFFIXES or not path.is_file():
        return None  # a tool a source made in memory: its name's place is all there is
    from toolnexus_gen.toolspec.load import LoadError, json_positions, load_document

    try:
        if path.suffix != ".json":
            return load_document(path, display).positions
        text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        return json_positions(text, pointers, lambda _code, message, *_: ValueError(message))
    except (LoadError, OSError, ValueError, IndexError):  # changed on disk since the build
        return None


def _place(positions: Positions | None, info: ToolInfo, key: str, pointer: str) -> tuple[int, int]:
    if positions is None:
        return info.place("name")
    full = _full(key, pointer, "/input_schema" not in positions.keys)
    probe = full
    while probe:  # the nearest part of it the spec writes
        if probe in positions.keys or probe in positions.values:
            return positions.key(probe) if probe == full else positions.value(probe)
        probe = probe.rpartition("/")[0]
    return info.place("name")
