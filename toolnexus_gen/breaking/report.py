"""Findings as text: for a terminal (`path:line:col`), for scripts (JSON), for GitHub Actions
(workflow commands that annotate the pull request's files), for a pull request comment
(Markdown), and as release notes (`changelog`, Markdown grouped by tool). Pure functions: the
CLI prints what they return.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence

from toolnexus_gen.breaking.rules import LEVELS, Finding
from toolnexus_gen.diagnostics import printable

FORMATS = ("text", "json", "github", "markdown")
POLICY = "TN550"  # the version policy's rule
GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
MARK = {"error": "🔴", "warning": "🟠", "info": "🔵"}


def summary(found: Sequence[Finding], against: str) -> str:
    """One line: how many findings, by severity; accepted ones counted apart."""
    if not found:
        return f"no change to the tool surface since {against}"
    counting = [f for f in found if f.accepted is None]
    counts = [
        f"{sum(f.severity == level for f in counting)} {level}{'s' * (level != 'info')}"
        for level in reversed(LEVELS)
    ]
    accepted = len(found) - len(counting)
    if accepted:
        counts.append(f"{accepted} accepted")
    return f"{len(found)} finding{'s' * (len(found) != 1)} since {against}: {', '.join(counts)}"


def render(found: Sequence[Finding], fmt: str, against: str, prefix: str = "") -> str:
    """`prefix`: the current folder from the repository's top, for GitHub's file paths."""
    if fmt == "json":
        return json.dumps({"findings": [f.as_json() for f in found]}, indent=2, ensure_ascii=True)
    if fmt == "github":
        return "\n".join(_github(f, prefix) for f in found)
    if fmt == "markdown":
        return _markdown(found, against)
    return "\n".join(_text(f) for f in found)


def _text(finding: Finding) -> str:
    where = f"{finding.path}:{finding.line}:{finding.col}" if finding.path else finding.tool
    subject = f"{finding.tool}: " if finding.path else ""
    return printable(
        f"{where}: {finding.severity}[{finding.rule}] {finding.category}: {subject}{finding.message}"
        + _accepted(finding)
    )


def _accepted(finding: Finding) -> str:
    return f" [{finding.accepted.said()}]" if finding.accepted is not None else ""


def _escape_data(text: str) -> str:
    """A workflow command's text: its own escapes, and no terminal control character."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(finding: Finding, prefix: str = "") -> str:
    """A workflow command: `::error file=...,line=...,col=...,title=...::message`."""
    props = []
    if finding.path:
        props += [
            f"file={_escape_property(_from_top(finding.path, prefix))}",
            f"line={finding.line}",
            f"col={finding.col}",
        ]
    accepted = ", accepted" if finding.accepted is not None else ""
    title = f"{finding.rule} {finding.title} ({finding.tool}{accepted})"
    props.append(f"title={_escape_property(title)}")
    message = f"{finding.category}: {finding.message}{_accepted(finding)}"
    if not finding.path:
        message = f"{finding.tool}: {message}"
    # an accepted finding annotates the file, but as a notice: it fails nothing
    level = "notice" if finding.accepted is not None else GITHUB_LEVEL[finding.severity]
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def _from_top(path: str, prefix: str) -> str:
    if not prefix or path.startswith("/"):
        return path
    return posixpath.normpath(posixpath.join(prefix, path))


def _cell(text: str) -> str:
    """Text in a code span of a table cell: nothing in it renders."""
    return _code(text).replace("|", "\\|")


def _code(text: str) -> str:
    """Text in a code span (`...`): nothing in it renders, a backtick would end it."""
    return printable(text).replace("`", "'")


# What makes Markdown (and the HTML GitHub lets through) of plain text: emphasis, links and
# images, HTML tags and entities, mentions, table cells. Names and descriptions at REF are
# anybody's text, and a pull request comment must show them, never render them.
_MARKUP = str.maketrans({c: "\\" + c for c in "\\`*_[]<>!~|@&"})


def _plain(text: str) -> str:
    """Text as it reads in Markdown: each character that could be markup escaped."""
    return printable(text).translate(_MARKUP)


def _markdown(found: Sequence[Finding], against: str) -> str:
    lines = [
        f"### Tool surface changes since `{_cell(against)}`",
        "",
        summary(found, _plain(against)),
    ]
    if not found:
        return "\n".join(lines)
    lines += ["", "| | rule | tool | change | where |", "|---|---|---|---|---|"]
    ordered = sorted(
        found,
        key=lambda f: (f.accepted is not None, -LEVELS.index(f.severity), f.tool, f.rule),
    )
    for finding in ordered:
        where = f"`{_cell(finding.path)}:{finding.line}`" if finding.path else ""
        level = f"{MARK[finding.severity]} {finding.severity}"
        if finding.accepted is not None:
            level = f"✅ {finding.severity}, accepted"
        lines.append(
            f"| {level} | `{finding.rule}` {finding.category} "
            f"| `{_cell(finding.tool)}` | {_plain(finding.message + _accepted(finding))} "
            f"| {where} |"
        )
    return "\n".join(lines)


def changelog(found: Sequence[Finding], against: str) -> str:
    """Release notes: the tools added, removed and changed since `against`, breaking changes
    first in each tool's list."""
    by_tool: dict[str, list[Finding]] = {}
    policy: list[Finding] = []  # the version policy's: one note for the release, naming them
    for finding in found:
        if finding.rule == POLICY:
            policy.append(finding)
        else:
            by_tool.setdefault(finding.tool, []).append(finding)
    added = sorted(t for t, fs in by_tool.items() if any(f.rule == "TN530" for f in fs))
    removed = sorted(t for t, fs in by_tool.items() if any(f.rule == "TN501" for f in fs))
    changed = sorted(t for t in by_tool if t not in added and t not in removed)
    lines = [f"## Tool changes since {_plain(against)}", ""]
    if not found:
        return "\n".join([*lines, "No tool changed."]) + "\n"
    breaking = [
        f for f in found if f.severity == "error" and f.category != "model" and f.rule != POLICY
    ]
    if breaking:
        tools = sorted({f.tool for f in breaking})
        lines += [
            f"**{len(breaking)} breaking change{'s' * (len(breaking) > 1)}** "
            f"({', '.join(f'`{_code(t)}`' for t in tools)}).",
            "",
        ]
    if policy:
        lines.append(f"- **{policy[0].severity}** {policy[0].title} ({POLICY}):")
        lines += [f"  - `{_code(f.tool)}`: {_plain(f.message)}" for f in policy]
        lines.append("")
    if added:
        lines += ["### Added", ""]
        for tool in added:
            said = next(f.message for f in by_tool[tool] if f.rule == "TN530")
            what = said.removeprefix("tool added").removeprefix(":").strip()  # " (from x): text"
            notes = [f for f in by_tool[tool] if f.rule != "TN530"]
            lines.append(
                f"- `{_code(tool)}`{': ' if what else ''}{_plain(what)}"
                + _details(notes, inline=True)
            )
        lines.append("")
    if removed:
        lines += ["### Removed", ""]
        for tool in removed:
            lines.append(f"- `{_code(tool)}` **(breaking)**: calls of it are refused")
        lines.append("")
    if changed:
        lines += ["### Changed", ""]
        for tool in changed:
            fs = by_tool[tool]
            was = next((f.was for f in fs if f.was), None)
            title = f"- `{_code(tool)}`" + (f" (renamed from `{_code(was)}`)" if was else "")
            lines.append(title)
            lines += _details(fs, inline=False).splitlines()
        lines.append("")
    return "\n".join(lines)


def _details(found: Sequence[Finding], *, inline: bool) -> str:
    ordered = sorted(found, key=lambda f: (-LEVELS.index(f.severity), f.rule, f.message))
    items = []
    for finding in ordered:
        tag = (
            f"**breaking ({finding.category})**: "
            if finding.severity == "error" and finding.category != "model"
            else ("**warning**: " if finding.severity == "warning" else "")
        )
        items.append(f"{tag}{_plain(finding.message + _accepted(finding))}")
    if inline:
        return "".join(f"; {item}" for item in items)
    return "\n".join(f"  - {item}" for item in items)
