"""Findings as text: for a terminal (`path:line:col`), for scripts (JSON), for GitHub Actions
(workflow commands that annotate the pull request's files), for a pull request comment
(Markdown), and as release notes (`changelog`, Markdown grouped by tool). Pure functions: the
CLI prints what they return.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence

from toolnexus_gen.breaking.rules import LEVELS, Finding
from toolnexus_gen.diagnostics import printable
from toolnexus_gen.diagnostics.catalogue import BREAKING

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


# Model-only rules a release note summarises in one line each (unless --detail model)
SUMMARISED = {
    "TN540": "descriptions or titles changed",
    "TN541": "examples changed",
    "TN543": "estimated token cost moved past the threshold",
    "TN513": "strict mode switched",
    "TN534": "formats nothing checks changed (annotations)",
}
# and compatible changes, when a release has more than MAX_LISTED of one (unless --detail all)
COMPATIBLE = {
    "TN531": "optional arguments added",
    "TN532": "more accepted (an enum value added, a bound loosened, ...)",
    "TN511": "defaults changed",
}
# The result side's rules: when a release has more than MAX_LISTED of their changes that break
# nothing, they are counted by kind, with the shared schemas (`$defs`) they come from (unless
# --detail all); breaking ones are always listed.
RESULTS = ("TN512", "TN527", "TN528", "TN533")
KINDS = {
    "nullable": "null accepted",
    "not_null": "null no longer accepted",
    "type": "types changed",
    "enum": "enum values changed",
    "removed_open": "fields no longer listed",
    "removed_closed": "fields no longer listed",
    "made_optional": "fields no longer required",
    "made_required": "fields required now",
    "required_added": "required fields added",
    "optional_added": "optional fields added",
    "bound": "bounds or patterns changed",
    "closed": "objects closed or opened",
    "exclusive": "oneOf branches that may overlap",
    "format": "formats changed (annotations)",
    "output_added": "output schemas added",
}
MAX_SCHEMAS = 5  # shared schemas named in one summary line
_SHARED = re.compile(r"/(?:\$defs|definitions)/([^/]+)")
MAX_LISTED = 20  # tools added (or compatible changes of a rule) listed one by one, at most
LONGEST = 320  # characters of one finding's message in release notes (a long union type)
MAX_NAMED = 6  # tools named in one line before "and N more" (a breaking change names all)


def changelog(
    found: Sequence[Finding],
    against: str,
    *,
    detail: str | None = None,
    version: str | None = None,
    today: str | None = None,
) -> str:
    """Release notes in Keep a Changelog's form (a section a project pastes into its
    CHANGELOG.md): Added, Removed, Deprecated, Changed. A change several tools share (a shared
    schema's) is one line naming them (a breaking one, every tool); model-only findings
    (descriptions, examples, token costs, strict mode, format annotations) are one line each,
    unless `detail` (then descriptions as word diffs); a large release's result-side changes
    short of breaking are counted by kind and shared schema, unless `detail` is "all"."""
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
    if added and len(added) > MAX_LISTED and detail != "all":
        prefixes: dict[str, int] = {}
        for tool in added:
            first = tool.split("_")[0]
            prefixes[first] = prefixes.get(first, 0) + 1
        counted = ", ".join(
            f"`{_code(first)}_*` {n}" for first, n in sorted(prefixes.items(), key=lambda i: -i[1])
        )
        lines += [
            "### Added",
            "",
            f"- {len(added)} tools, by the first word of their names: {counted} "
            "(`changelog --detail all` lists them)",
            "",
        ]
    elif added:
        lines += ["### Added", ""]
        for tool in added:
            said = next(f.message for f in by_tool[tool] if f.rule == "TN530")
            # "tool added (from an HTTP endpoint): text": the text
            what = said.removeprefix("tool added").partition(": ")[2].strip()
            notes = [f for f in by_tool[tool] if f.rule not in ("TN530", "TN544", *SUMMARISED)]
            lines.append(
                f"- `{_code(tool)}`{': ' if what else ''}{_plain(what)}"
                + "".join(f"; {_item(f, False)}" for f in _ordered(notes))
            )
        lines.append("")
    if removed:
        lines += ["### Removed", "", "Calls of these tools are refused now.", ""]
        plain: dict[str, list[str]] = {}  # many removals: those with nothing to say, by word
        for tool in removed:
            gone = next(f for f in by_tool[tool] if f.rule == "TN501")
            tag = "**(breaking)**" if _breaking(gone) else f"({gone.severity})"
            why = gone.message.partition(" (deprecated")[2].removesuffix(")")
            if len(removed) > MAX_LISTED and _breaking(gone) and not why and not gone.accepted:
                plain.setdefault(tool.split("_")[0], []).append(tool)
                continue
            lines.append(
                f"- `{_code(tool)}` {tag}"
                + (f": deprecated{_plain(why)}" if why else "")
                + _plain(_accepted(gone))
            )
        for first, tools in sorted(plain.items()):
            shown = ", ".join(f"`{_code(t)}`" for t in tools)
            lines.append(f"- `{_code(first)}_*` **(breaking)**: {shown}")
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
    # compatible changes are counted only when there are many (a large release)
    many = {
        rule: what
        for rule, what in COMPATIBLE.items()
        if sum(f.rule == rule for f in changed) > MAX_LISTED
    }
    brief = {**({} if detail else SUMMARISED), **({} if detail == "all" else many)}
    summarised = [f for f in changed if f.rule in brief and f.severity != "error"]
    results = [f for f in changed if f.rule in RESULTS and not _breaking(f)]
    if detail == "all" or len(results) <= MAX_LISTED:
        results = []
    apart = {id(f) for f in [*summarised, *results]}
    listed = [f for f in changed if id(f) not in apart]
    if listed or summarised or results:
        lines += ["### Changed", ""]
        lines += _changed_lines(listed, detail is not None)
        lines += _results(results)
        for rule, what in brief.items():
            these = [f for f in summarised if f.rule == rule]
            if these:
                tools = sorted({f.tool for f in these})
                # the tools named when they are few (many: counted, as nothing here breaks)
                named = f"{_named(tools)}; " if len(tools) <= MAX_NAMED else ""
                lines.append(
                    f"- {what[0].upper()}{what[1:]}: {len(these)} change{'s' * (len(these) > 1)} "
                    f"in {len(tools)} tool{'s' * (len(tools) > 1)} ({named}"
                    f"`changelog --detail {'model' if rule in SUMMARISED else 'all'}` lists them)"
                )
        lines.append("")
    return "\n".join(lines)


def _results(found: Sequence[Finding]) -> list[str]:
    """Result-side changes that break nothing, counted: under a line for each rule, one line
    per kind of change saying how many, in how many tools, and the shared schemas they come
    from (most first)."""
    if not found:
        return []
    groups: dict[tuple[str, str], dict[str, list[Finding]]] = {}
    for finding in found:
        kinds = groups.setdefault((finding.rule, finding.severity), {})
        kinds.setdefault(finding.kind or "", []).append(finding)
    lines = [
        "- Result-side warnings and compatible changes, counted (`changelog --detail all` "
        "lists each):"
    ]
    for rule, severity in sorted(groups, key=lambda k: (-LEVELS.index(k[1]), k[0])):
        level = "" if severity == "info" else f", {severity}"
        lines.append(f"  - {BREAKING[rule].title} ({rule}{level}):")
        kinds = groups[(rule, severity)]
        for kind, fs in sorted(kinds.items(), key=lambda i: (-len(i[1]), i[0])):
            tools = len({f.tool for f in fs})
            lines.append(
                f"    - {KINDS.get(kind, 'other changes')}: {len(fs)} in {tools} "
                f"tool{'s' * (tools > 1)} ({_sources(fs)})"
            )
    return lines


def _sources(found: Sequence[Finding]) -> str:
    """The shared schemas changes come from, most first, and how many are in a tool's own."""
    schemas: dict[str, int] = {}
    own = 0
    for finding in found:
        name = _shared(finding)
        if name is None:
            own += 1
        else:
            schemas[name] = schemas.get(name, 0) + 1
    top = sorted(schemas.items(), key=lambda i: (-i[1], i[0]))
    named = [f"`{_code(name)}` {n}" for name, n in top[:MAX_SCHEMAS]]
    if len(top) > MAX_SCHEMAS:
        rest = sum(n for _, n in top[MAX_SCHEMAS:])
        named.append(f"{len(top) - MAX_SCHEMAS} more schemas {rest}")
    if own:
        named.append(f"own schemas {own}")
    return ", ".join(named)


def _shared(finding: Finding) -> str | None:
    """The shared schema (a `$defs` entry) a finding's place is in, if any."""
    if finding.at is None:
        return None
    found = _SHARED.findall(finding.at[1])
    return found[-1].replace("~1", "/").replace("~0", "~") if found else None


def _breaking(finding: Finding) -> bool:
    return finding.severity == "error" and finding.category != "model"


def _named(tools: Sequence[str], *, everyone: bool = False) -> str:
    """Tools in code spans, the first MAX_NAMED of them (`everyone`: all; the release's first
    line names every tool a breaking change touches)."""
    cut = len(tools) if everyone else MAX_NAMED
    shown = ", ".join(f"`{_code(t)}`" for t in tools[:cut])
    more = len(tools) - cut
    return shown + (f" and {more} more" if more > 0 else "")


def _changed_lines(found: Sequence[Finding], detail: bool) -> list[str]:
    """A change several tools share (a shared schema's) once, naming the tools; the changes of
    one rule that mean the same (the message's tail after its last ': ') under one line saying
    it, each change below it (a field inside one already listed for the same tools is counted,
    not repeated); then each tool's own changes under its name. Breaking changes first."""
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    for finding in found:
        key = (finding.rule, finding.severity, finding.message, _accepted(finding))
        groups.setdefault(key, []).append(finding)
    shared = {key: fs for key, fs in groups.items() if len({f.tool for f in fs}) > 1}
    alike: dict[tuple[str, str, str, str], list[tuple[str, tuple[str, ...], Finding]]] = {}
    for (rule, severity, message, accepted), fs in shared.items():
        what, sep, why = _cut(message).rpartition(": ")
        tools = tuple(sorted({f.tool for f in fs}))
        alike.setdefault((rule, severity, why if sep else "", accepted), []).append(
            (what if sep else why, tools, fs[0])
        )
    lines = []
    for key in sorted(alike, key=lambda k: (-LEVELS.index(k[1]), k[0], k[2])):
        entries = alike[key]
        first = entries[0][2]
        everyone = _breaking(first)  # a breaking change names every tool it touches
        if len(entries) == 1:
            touched = list(entries[0][1])
            named = _named(touched, everyone=everyone)
            lines.append(f"- {_item(first, detail)} (in {len(touched)} tools: {named})")
            continue
        why = f": {_plain(key[2])}" if key[2] else f": {BREAKING[first.rule].title}"
        lines.append(f"- {_tag(first)}({first.rule}){why}{_plain(key[3])}")
        lines += _nested(entries, everyone)
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


_FIELD = re.compile(r"'([^']*)'")


def _nested(entries: list[tuple[str, tuple[str, ...], Finding]], everyone: bool) -> list[str]:
    """The changes under one line: what each changed, and the tools (a field inside another
    listed for the same tools counted on that one's line)."""
    fields = [m.group(1) if (m := _FIELD.search(what)) else None for what, _, _ in entries]
    inside: dict[int, int] = {}
    kept = []
    for i, (field, (_, tools, _)) in enumerate(zip(fields, entries, strict=True)):
        outer = next(
            (
                j
                for j, other in enumerate(fields)
                if other
                and field
                and other != field
                and entries[j][1] == tools
                and field.startswith((other + ".", other + "["))
            ),
            None,
        )
        if outer is None:
            kept.append(i)
        else:
            inside[outer] = inside.get(outer, 0) + 1
    lines = []
    for i in sorted(kept, key=lambda i: (entries[i][1], entries[i][0])):
        what, tools, _ = entries[i]
        more = inside.get(i, 0)
        extra = f" (and {more} change{'s' * (more > 1)} inside)" if more else ""
        lines.append(f"  - {_plain(what)}{extra}: {_named(list(tools), everyone=everyone)}")
    return lines


def _tag(finding: Finding) -> str:
    if _breaking(finding):
        return f"**breaking ({finding.category})** "
    return "**warning** " if finding.severity == "warning" else ""


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
    return f"{tag}{_plain(_cut(finding.message) + _accepted(finding))}"


def _cut(text: str) -> str:
    return text if len(text) <= LONGEST else text[: LONGEST - 1] + "…"


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
