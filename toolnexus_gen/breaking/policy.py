"""The version policy (`version_policy = true`): a `callers` or `handlers` error since REF needs
a major version bump of the project, else that is a finding of its own (TN550).

"Major" is the first non-zero part of the release, as Cargo reads SemVer: 1.4.2 -> 2.0.0 is
one, and so is 0.3.1 -> 0.4.0 (under 1.0 the minor version carries breaking changes).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

from toolnexus_gen.breaking.rules import Finding
from toolnexus_gen.diagnostics.catalogue import BREAKING

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RELEASE = re.compile(r"\s*v?(\d{1,18}(?:\.\d{1,18})*)")


class PolicyError(Exception):
    """The policy is on, but the project's version cannot be read: one line saying why."""


def version_in(text: str | None, key: str) -> str | None:
    """The value of a dotted key ("project.version") in a pyproject.toml's text."""
    if text is None:
        return None
    try:
        node: Any = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, str) else None


def release(version: str) -> tuple[int, ...] | None:
    found = RELEASE.match(version)
    return tuple(int(part) for part in found.group(1).split(".")) if found else None


def major_bump(old: str, new: str) -> bool:
    """Whether `new` bumps the first non-zero part of `old` (or an earlier one)."""
    before, after = release(old), release(new)
    if before is None or after is None:
        return old != new  # not a release number: any change counts as deliberate
    size = max(len(before), len(after))
    before += (0,) * (size - len(before))
    after += (0,) * (size - len(after))
    major = next((i for i, part in enumerate(before) if part), size - 1)
    return after[: major + 1] > before[: major + 1]


def check(
    found: Sequence[Finding],
    key: str,
    old_text: str | None,
    new_text: str,
    display: str,
    ref: str,
) -> tuple[list[Finding], str | None]:
    """(a TN550 finding for each tool with a callers or handlers error not accepted, when the
    version did not get a major bump; a note when the policy could not be applied). Each names
    its tool and stands where the tool does (as its other findings); its message says where the
    version is. An accepted finding was judged fine by the team: it asks for no major version."""
    breaking = [
        f
        for f in found
        if f.severity == "error" and f.category in ("callers", "handlers") and f.accepted is None
    ]
    new = version_in(new_text, key)
    if new is None:
        raise PolicyError(
            f'version_policy is on, but {display} has no {key} (set version = "..." under '
            "[tool.toolnexus-gen.breaking] to read another key)"
        )
    old = version_in(old_text, key)
    if old is None:
        return [], f"version policy: {ref} has no {key}, so there is no version to compare with"
    if not breaking or major_bump(old, new):
        return [], None
    rule = BREAKING["TN550"]
    moved = f"went from {old} to {new}" if old != new else f"is still {old}"
    line, col = _place(new_text, key)
    by_tool: dict[str, list[Finding]] = {}
    for finding in breaking:
        by_tool.setdefault(finding.tool, []).append(finding)
    extra = []
    for tool, its in sorted(by_tool.items()):
        codes = ", ".join(sorted({f.rule for f in its}))
        category = "callers" if any(f.category == "callers" for f in its) else "handlers"
        extra.append(
            Finding(
                tool,
                "TN550",
                category,
                rule.severity,
                f"breaking since {ref} ({codes}), but {key} {moved} ({display}:{line}:{col}): "
                "bump the major version",
                at=("name", ""),
                was=its[0].was,
            )
        )
    return extra, None


def _place(text: str, key: str) -> tuple[int, int]:
    """Where a dotted key's `name = ...` line stands in its table (TOML keeps no positions)."""
    *table, name = key.split(".")
    wanted = ".".join(table)
    inside = not table
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]\s*$", line)
        if header:
            inside = header.group(1).replace('"', "") == wanted
            continue
        if inside:
            found = re.match(rf"^(\s*)[\"']?{re.escape(name)}[\"']?\s*=", line)
            if found:
                return number, len(found.group(1)) + 1
    return 1, 1
