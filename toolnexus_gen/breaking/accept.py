"""Accepting findings one by one, and per-rule severities: `accept` and `severity` under
`[tool.toolnexus-gen.breaking]`, and `--accept TOOL:RULE`.

    accept = [
        "get_weather:TN503",                                    # this rule, for this tool
        {finding = "legacy_*:TN501", reason = "sunset in 2.0", until = "2.0.0"},
    ]
    severity = {TN506 = "error", TN543 = "warning"}

An accepted finding stays in every report, marked accepted (with its reason), and counts for no
`--fail-on`. `until` (a version, or a date YYYY-MM-DD) ends the acceptance: from that version of
the project on (its version as the version policy reads it), or after that day, the finding
counts again and a note says so. An entry that accepts nothing is a note too (a stale entry).
"""

from __future__ import annotations

import datetime
import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from toolnexus_gen.breaking.policy import release
from toolnexus_gen.breaking.rules import LEVELS, Accepted, Finding
from toolnexus_gen.diagnostics.catalogue import BREAKING

DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
YEAR = re.compile(r"\d{4}-")  # what starts as a date is a date, never a version
# A whole release number (PEP 440's public part: 2.0, v2.0.0, 2.0.0rc1, 2.0.0.post1, 2.0.dev3),
# so that "2.0.0 junk" is refused rather than read as 2.0.0
VERSION = re.compile(
    r"v?\d{1,18}(?:\.\d{1,18})*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)\d*)?"
    r"(?:[-_.]?(?:post|rev|r)\d*)?(?:[-_.]?dev\d*)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Entry:
    tool: str  # a name or a glob
    rule: str
    reason: str | None = None
    until: str | None = None

    @property
    def written(self) -> str:
        return f"{self.tool}:{self.rule}"

    def matches(self, finding: Finding) -> bool:
        names = [n for n in (finding.tool, finding.was) if n]
        return finding.rule == self.rule and any(
            fnmatch.fnmatchcase(name, self.tool) for name in names
        )


def parse(text: str) -> Entry | str:
    """An entry "TOOL:RULE", or what is wrong with it."""
    tool, colon, rule = text.strip().rpartition(":")
    rule = rule.strip().upper()
    if not colon or not tool.strip() or not rule:
        return f"{text!r} is not TOOL:RULE (such as get_weather:TN503)"
    if rule not in BREAKING:
        return f"{text!r}: {rule} is no rule of toolnexus-gen breaking ({min(BREAKING)}-{max(BREAKING)})"
    return Entry(tool.strip(), rule)


def until_problem(until: object) -> str | None:
    """What is wrong with an `until` (None: nothing)."""
    if not isinstance(until, str) or not until.strip():
        return "until must be a version (2.0.0) or a date (YYYY-MM-DD)"
    if DATE.fullmatch(until.strip()):
        try:
            datetime.date.fromisoformat(until.strip())
        except ValueError:
            return f"until {until!r} is not a date"
        return None
    if YEAR.match(until.strip()):  # 2027-03, 2027-03-31T10:00:00: not read as version 2027
        return f"until {until!r} is not a date (YYYY-MM-DD, the day only)"
    if release(until) is None or not VERSION.fullmatch(until.strip()):
        return f"until {until!r} is neither a version (2.0.0) nor a date (YYYY-MM-DD)"
    return None


def expired(entry: Entry, version: str | None, today: datetime.date) -> bool:
    """Whether an entry's `until` has come: the day is past, or the project's version reached it."""
    if entry.until is None:
        return False
    until = entry.until.strip()
    if DATE.fullmatch(until):
        return today > datetime.date.fromisoformat(until)
    if version is None:
        return False
    now, end = release(version), release(until)
    if now is None or end is None:
        return False
    size = max(len(now), len(end))
    return now + (0,) * (size - len(now)) >= end + (0,) * (size - len(end))


def apply(
    found: Sequence[Finding],
    entries: Sequence[Entry],
    version: str | None,
    today: datetime.date | None = None,
) -> tuple[list[Finding], list[str]]:
    """The findings, those an entry names marked accepted; and notes: each entry that has
    expired while it still names a finding, and each that names none."""
    today = today or datetime.date.today()
    notes: list[str] = []
    live = [e for e in entries if not expired(e, version, today)]
    out = []
    for finding in found:
        entry = next((e for e in live if e.matches(finding)), None)
        if entry is not None:
            finding = replace(finding, accepted=Accepted(entry.written, entry.reason, entry.until))
        out.append(finding)
    for entry in entries:
        named = any(entry.matches(f) for f in found)
        if entry not in live and any(entry.matches(f) and f.accepted is None for f in out):
            notes.append(
                f"accept {entry.written} expired (until {entry.until}): the finding counts again"
            )
        elif not named:
            notes.append(f"accept {entry.written} names no finding (a stale entry to remove)")
    return out, list(dict.fromkeys(notes))


def severities(found: Iterable[Finding], levels: dict[str, str]) -> list[Finding]:
    """The findings with each rule's severity as `severity = {RULE = LEVEL}` sets it."""
    return [replace(f, severity=levels[f.rule]) if f.rule in levels else f for f in found]


def level_problem(value: object) -> str | None:
    if not isinstance(value, dict) or not value:
        return f"must be a table of rule IDs and levels ({', '.join(LEVELS)})"
    for rule, level in value.items():
        if str(rule).upper() not in BREAKING:
            return f"names {rule!r}, no rule of toolnexus-gen breaking"
        if level not in LEVELS:
            return f"sets {rule} to {level!r}; a level is one of {', '.join(LEVELS)}"
    return None
