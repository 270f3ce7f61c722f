"""What profile "reach" did, said briefly for the specs that carry it themselves.

A source (`toolnexus-gen sync`, `import openapi`) writes `profile: reach` into each spec it makes,
so that what it writes builds for every target while the schemas stay exactly as the source sent
them. Every step the profile takes is still a warning at its place (`toolnexus-gen list` shows
them, tool by tool), but a build reports them (and any other warning) for such specs as one line
per folder: fifty tools of a server are one line that counts what was done, not three hundred.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import ToolSet

# the steps of profile "reach", as the build reports them, and how the summary counts them
STEPS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("TN210", "TN211"), "alias", "aliases"),
    (("TN220",), "removal described", "removals described"),
    (("TN225",), "exact rewrite", "exact rewrites"),
    (("TN221",), "strict entry", "strict entries"),
    (("TN223", "TN226"), "non-strict entry", "non-strict entries"),
    (
        ("TN222",),
        "Gemini declaration via parametersJsonSchema",
        "Gemini declarations via parametersJsonSchema",
    ),
    (("TN224",), "root taken as an object", "roots taken as objects"),
)
STEP_CODES = frozenset(code for codes, _, _ in STEPS for code in codes)
SUMMARY_CODE = "TN414"


def counted(codes: Iterable[str]) -> str:
    """What the steps with these codes did, in one phrase ("" when nothing)."""
    found = list(codes)
    parts = []
    for step_codes, one, many in STEPS:
        count = sum(found.count(code) for code in step_codes)
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    return ", ".join(parts)


def fold(diagnostics: list[Diagnostic], toolset: ToolSet) -> list[Diagnostic]:
    """The diagnostics, with the warnings of the specs that carry `profile: reach` themselves
    (the profile's steps, and what the rules only warn about) replaced by one warning per
    folder, at the `profile` key of its first spec. Errors stay, each at its place."""
    carried = {tool.display: tool for tool in toolset.tools if tool.profile == "reach"}
    if not carried:
        return diagnostics
    kept: list[Diagnostic] = []
    folded: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.path in carried and diagnostic.severity is Severity.WARNING:
            folder = str(PurePosixPath(diagnostic.path).parent)
            folded.setdefault(folder, []).append(diagnostic)
        else:
            kept.append(diagnostic)
    for folder, steps in folded.items():
        specs = sorted(
            display for display in carried if str(PurePosixPath(display).parent) == folder
        )
        first = carried[specs[0]]
        line, col = first.place("profile")
        done = counted(d.code for d in steps if d.code in STEP_CODES) or "nothing to change"
        others = _others(d.code for d in steps if d.code not in STEP_CODES)
        kept.append(
            Diagnostic(
                first.display,
                line,
                col,
                SUMMARY_CODE,
                f"{folder}/: {len(specs)} spec{'' if len(specs) == 1 else 's'} with profile "
                f'"reach" (written by their source): {done} to reach every target'
                f"{others}; `toolnexus-gen list` shows each one",
                Severity.WARNING,
            )
        )
    return sorted(kept)


def _others(codes: Iterable[str]) -> str:
    """The other warnings, counted by code with their catalogue titles."""
    from toolnexus_gen.diagnostics.catalogue import explain

    found = list(codes)
    parts = []
    for code in sorted(set(found)):
        known = explain(code)
        title = f" ({known[0]})" if known else ""
        parts.append(f"{found.count(code)} {code}{title}")
    return f"; warnings: {', '.join(parts)}" if parts else ""
