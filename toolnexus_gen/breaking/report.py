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


# Model-only rules a release note summarises in one line each (unless --detail model).
SUMMARISED = {
    "TN540": "descriptions or titles changed",
    "TN541": "examples changed",
    "TN543": "estimated token cost moved past the threshold",
    "TN513": "strict mode switched",
}
MAX_NAMED = 12  # tools named in one line before "and N more"


def changelog(
    found: Sequence[Finding],
    against: str,
    *,
    detail: bool = False,
    version: str | None = None,
    today: str | None = None,
) -> str:
    """Release notes in Keep a Changelog's form (a section a project pastes into its
    CHANGELOG.md): Added, Removed, Deprecated, Changed. A change several tools share (a shared
    schema's) is one line naming them; model-only findings (descriptions, examples, token
    costs, strict mode) are one line each, unless `detail` (then descriptions as word diffs)."""
    heading = f"## [{_plain(version)}] - {today}" if version and today else "## [Unreleased]"
    lines = [heading, ""]
    if not found:
        return "\n".join([*lines, f"No tool changed since {_plain(against)}."]) + "\n"
    by_tool: dict[str, list[Finding]] = {}
    policy: list[Finding] = []
    for finding in found:
        (policy if finding.rule == POLICY else by_tool.setdefault(finding.tool, [])).append(finding)
    added = sorted(t for t, fs in by_tool.items() if any(f.rule == "TN530" for f in fs))
    removed = sorted(t for t, fs in by_tool.items() if any(f.rule == "TN501" for f in fs))
    breaking = [f for f in found if _breaking(f) and f.rule != POLICY]
    lines.append(f"Tool changes since {_plain(against)}.")
    if breaking:
        tools = sorted({f.tool for f in breaking})
        accepted = sum(f.accepted is not None for f in breaking)
        lines[-1] += (
            f" **{len(breaking)} breaking change{'s' * (len(breaking) > 1)}** in "
            f"{len(tools)} tool{'s' * (len(tools) > 1)} ({_named(tools)})"
            + (f", {accepted} of them accepted" if accepted else "")
            + "."
        )
    lines.append("")
    if policy:
        lines.append(f"- **{policy[0].severity}** {policy[0].title} ({POLICY}):")
        lines += [f"  - `{_code(f.tool)}`: {_plain(f.message)}" for f in policy]
        lines.append("")
    if added:
        lines += ["### Added", ""]
        for tool in added:
            said = next(f.message for f in by_tool[tool] if f.rule == "TN530")
            what = said.removeprefix("tool added").removeprefix(":").strip()  # " (from x): text"
            notes = [f for f in by_tool[tool] if f.rule not in ("TN530", "TN544", *SUMMARISED)]
            lines.append(
                f"- `{_code(tool)}`{': ' if what else ''}{_plain(what)}"
                + "".join(f"; {_item(f, False)}" for f in _ordered(notes))
            )
        lines.append("")
    if removed:
        lines += ["### Removed", ""]
        for tool in removed:
            gone = next(f for f in by_tool[tool] if f.rule == "TN501")
            tag = "**(breaking)**" if _breaking(gone) else f"({gone.severity})"
            why = gone.message.partition(" (deprecated")[2]
            lines.append(
                f"- `{_code(tool)}` {tag}: calls of it are refused"
                + (f" (deprecated{_plain(why)}" if why else "")
                + _accepted(gone)
            )
        lines.append("")
    deprecated = [f for f in found if f.rule == "TN544"]
    if deprecated:
        lines += ["### Deprecated", ""]
        lines += [f"- `{_code(f.tool)}`: {_plain(f.message)}" for f in deprecated]
        lines.append("")
    changed = [
        f
        for t, fs in sorted(by_tool.items())
        if t not in added and t not in removed
        for f in fs
        if f.rule != "TN544"
    ]
    summarised = [] if detail else [f for f in changed if f.rule in SUMMARISED]
    listed = [f for f in changed if f not in summarised]
    if listed or summarised:
        lines += ["### Changed", ""]
        lines += _changed_lines(listed, detail)
        for rule, what in SUMMARISED.items():
            these = [f for f in summarised if f.rule == rule]
            if these:
                tools = sorted({f.tool for f in these})
                lines.append(
                    f"- {what[0].upper()}{what[1:]}: {len(these)} change{'s' * (len(these) > 1)} "
                    f"in {len(tools)} tool{'s' * (len(tools) > 1)} ({_named(tools)}; "
                    "`changelog --detail model` lists them)"
                )
        lines.append("")
    return "\n".join(lines)


def _breaking(finding: Finding) -> bool:
    return finding.severity == "error" and finding.category != "model"


def _named(tools: Sequence[str]) -> str:
    shown = ", ".join(f"`{_code(t)}`" for t in tools[:MAX_NAMED])
    more = len(tools) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _changed_lines(found: Sequence[Finding], detail: bool) -> list[str]:
    """A change several tools share as one line naming them (breaking first), then each tool's
    own changes under its name."""
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    for finding in found:
        key = (finding.rule, finding.severity, finding.message, _accepted(finding))
        groups.setdefault(key, []).append(finding)
    shared = {key: fs for key, fs in groups.items() if len({f.tool for f in fs}) > 1}
    lines = []
    for key in sorted(shared, key=lambda k: (-LEVELS.index(k[1]), k[0], k[2])):
        fs = shared[key]
        tools = sorted({f.tool for f in fs})
        lines.append(f"- {_item(fs[0], detail)} (in {len(tools)} tools: {_named(tools)})")
    own: dict[str, list[Finding]] = {}
    for key, fs in groups.items():
        if key not in shared:
            for finding in fs:
                own.setdefault(finding.tool, []).append(finding)
    for tool in sorted(own):
        fs = own[tool]
        was = next((f.was for f in fs if f.was), None)
        lines.append(f"- `{_code(tool)}`" + (f" (renamed from `{_code(was)}`)" if was else ""))
        lines += [f"  - {_item(f, detail)}" for f in _ordered(fs)]
    return lines


def _ordered(found: Sequence[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (-LEVELS.index(f.severity), f.rule, f.message))


def _item(finding: Finding, detail: bool) -> str:
    tag = (
        f"**breaking ({finding.category})**: "
        if _breaking(finding)
        else ("**warning**: " if finding.severity == "warning" else "")
    )
    if detail and finding.texts is not None:
        what = finding.message.split(" changed from ")[0].split(" of ")[0]
        where = finding.message.partition(" of ")[2].partition(" changed")[0]
        said = f"{what}{f' of {where}' if where else ''}: {word_diff(*finding.texts)}"
        return f"{tag}{said}{_plain(_accepted(finding))}"
    return f"{tag}{_plain(finding.message + _accepted(finding))}"


def word_diff(before: str, after: str, context: int = 4) -> str:
    """What changed between two texts, word by word, as Markdown: words taken out struck
    (~~...~~), words put in bold, unchanged runs cut to a few words of context."""
    import difflib

    old, new = before.split(), after.split()
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            run = old[i1:i2]
            first, last = i1 == 0, i2 == len(old)
            if len(run) > 2 * context:
                head = [] if first else run[:context]
                tail = [] if last else run[-context:]
                run = [*head, "…", *tail]
            parts.append(" ".join(_plain(w) if w != "…" else w for w in run))
        if op in ("delete", "replace"):
            parts.append(f"~~{' '.join(_plain(w) for w in old[i1:i2])}~~")
        if op in ("insert", "replace"):
            parts.append(f"**{' '.join(_plain(w) for w in new[j1:j2])}**")
    return " ".join(p for p in parts if p)
