"""Where a finding points: the spec of the tool as it is now, at the line and column of what
changed (a property, `required`, the description), or of its name when that part of the spec is
not written there (a built-in's setting, a skill, a key a transform added). A removed tool has
no place. Only the specs of tools with findings are read again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from toolnexus_gen.breaking.rules import Finding
from toolnexus_gen.fs.paths import SPEC_SUFFIXES
from toolnexus_gen.ir import Document, ToolInfo


def locate(found: Iterable[Finding], infos: dict[str, ToolInfo]) -> list[Finding]:
    documents: dict[str, Document | None] = {}
    placed = []
    for finding in found:
        info = infos.get(finding.tool or "")
        if info is None or finding.at is None or finding.path is not None:
            placed.append(finding)  # removed, or placed already (the version policy)
            continue
        if info.display not in documents:
            documents[info.display] = _document(info.display)
        line, col = _place(documents[info.display], info, *finding.at)
        placed.append(replace(finding, path=info.display, line=line, col=col))
    return placed


def _document(display: str) -> Document | None:
    path = Path(display)
    if path.suffix not in SPEC_SUFFIXES or not path.is_file():
        return None  # a tool a source made in memory: its name's place is all there is
    from toolnexus_gen.toolspec.load import LoadError, load_document

    try:
        return load_document(path, display)
    except (LoadError, OSError):
        return None


def _place(document: Document | None, info: ToolInfo, key: str, pointer: str) -> tuple[int, int]:
    if document is None:
        return info.place("name")
    data = document.data
    bare = isinstance(data, dict) and "input_schema" not in data and key == "input_schema"
    full = (pointer if bare else f"/{key}{pointer}") if key != "name" else "/name"
    positions = document.positions
    probe = full
    while probe:  # the nearest part of it the spec writes
        if probe in positions.keys or probe in positions.values:
            return positions.key(probe) if probe == full else positions.value(probe)
        probe = probe.rpartition("/")[0]
    return info.place("name")
