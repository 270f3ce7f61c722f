"""Deprecation: a tool or argument deprecated at REF long enough may go.

A tool is deprecated by its spec (`deprecated: true`, or `{since, note}`), by an imported
OpenAPI operation's `deprecated`, or by an MCP tool's annotations (`deprecated: true`); an
argument by its schema's `deprecated: true` (JSON Schema's keyword; an imported OpenAPI
parameter's too). Removing one that was deprecated at REF for at least the configured number of
releases or days (`deprecation = {releases = 1, days = 90}` under
`[tool.toolnexus-gen.breaking]`; default one release) is a warning instead of an error:

- since a date: the days from it to today;
- since a version, or (without `since`) since REF's project version: the releases from it to the
  project's version now, counted in minor steps (1.0 -> 1.2 is two; 1.4 -> 2.0 is one; a patch
  release is none).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolnexus_gen.breaking.policy import release
from toolnexus_gen.breaking.rules import Finding
from toolnexus_gen.breaking.schema import deprecated_arguments
from toolnexus_gen.breaking.surface import Surface

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# a tool removed (with its handler method and model); an argument removed
REMOVALS = ("TN501", "TN520", "TN521", "TN505", "TN506")


@dataclass(frozen=True)
class Policy:
    releases: int | None = 1
    days: int | None = None
    ref_version: str | None = None  # the project's version at REF
    version: str | None = None  # and now
    today: datetime.date | None = None


def releases_between(old: str, new: str) -> int | None:
    """Minor releases from `old` to `new` (None: not versions)."""
    before, after = release(old), release(new)
    if before is None or after is None:
        return None
    b_major, b_minor = (*before, 0)[:2]
    a_major, a_minor = (*after, 0)[:2]
    if a_major > b_major:
        return a_major - b_major + a_minor
    return max(0, a_minor - b_minor) if a_major == b_major else 0


def age(since: Any, policy: Policy) -> tuple[int | None, int | None, str]:
    """(releases, days) a deprecation has stood, where known; and since when, in words."""
    today = policy.today or datetime.date.today()
    if isinstance(since, str) and DATE.fullmatch(since.strip()):
        try:
            days = (today - datetime.date.fromisoformat(since.strip())).days
        except ValueError:
            return None, None, since
        return None, days, since
    start = since if isinstance(since, str) else policy.ref_version
    if start is None or policy.version is None:
        return None, None, start or "REF"
    return releases_between(start, policy.version), None, start


def long_enough(since: Any, policy: Policy) -> tuple[bool, str]:
    """Whether a deprecation has stood as long as the policy asks; and how long, in words."""
    releases, days, start = age(since, policy)
    if releases is not None:
        said = f"deprecated since {start}, {releases} release{'s' * (releases != 1)} ago"
    elif days is not None:
        said = f"deprecated since {start}, {days} day{'s' * (days != 1)} ago"
    else:
        said = f"deprecated since {start}, for how long unknown"
    met = (
        policy.releases is not None and releases is not None and releases >= policy.releases
    ) or (policy.days is not None and days is not None and days >= policy.days)
    asked = " or ".join(
        f"{n} {unit}{'s' * (n != 1)}"
        for n, unit in ((policy.releases, "release"), (policy.days, "day"))
        if n
    )
    return met, f"{said}; the policy asks {asked or 'nothing'}"


def apply(found: Sequence[Finding], old: Surface, policy: Policy) -> list[Finding]:
    """The findings, a removal of what was deprecated at REF long enough made a warning (and
    each removal of something deprecated saying since when)."""
    out = []
    for finding in found:
        if finding.rule not in REMOVALS or finding.severity == "info":
            out.append(finding)
            continue
        tool = old.tools.get(finding.was or finding.tool)
        since: Any = None
        marked = False
        if tool is not None and finding.at is None and tool.deprecation is not None:
            marked, since = True, tool.deprecation.get("since")  # the tool is gone
        elif tool is not None and finding.at is not None and finding.at[0] == "input_schema":
            marked = finding.at[1] in set(deprecated_arguments(tool.input_schema))
        if not marked:
            out.append(finding)
            continue
        met, said = long_enough(since, policy)
        finding = replace(finding, message=f"{finding.message} ({said})")
        out.append(replace(finding, severity="warning") if met else finding)
    return out
