"""`[tool.toolnexus-gen.breaking]` in the nearest pyproject.toml: what `toolnexus-gen breaking`
and `changelog` check and report. A wrong key or value is a located TN802, as for the rest of
the section.

    [tool.toolnexus-gen.breaking]
    use = ["callers", "handlers", "model"]   # categories checked (default: all three)
    except = ["TN540"]                       # rule IDs left out
    ignore = ["legacy_*", "debug_dump"]      # tool names or globs left out
    fail_on = "error"                        # the default of --fail-on
    token_threshold = 10                     # percent a tool's token cost may move unreported
    version_policy = true                    # a breaking change needs a major version bump
    version = "project.version"              # where the version is (a dotted key of pyproject)
    accept = ["get_weather:TN503"]           # findings accepted one by one (see accept.py)
    severity = {TN506 = "error"}             # a rule's severity, instead of its default
    deprecation = {releases = 1, days = 90}  # how long a deprecation stands before removal
"""

from __future__ import annotations

import datetime
import reprlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_gen.breaking import accept
from toolnexus_gen.breaking.rules import CATEGORIES, LEVELS
from toolnexus_gen.config.pyproject import SECTION, _key_position, find_pyproject, read_pyproject
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError
from toolnexus_gen.diagnostics.catalogue import BREAKING
from toolnexus_gen.fs.paths import display_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TABLE = "breaking"
KEYS = (
    "use",
    "except",
    "ignore",
    "fail_on",
    "token_threshold",
    "version_policy",
    "version",
    "accept",
    "severity",
    "deprecation",
)


@dataclass(frozen=True)
class Settings:
    use: tuple[str, ...] = CATEGORIES
    excepted: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    token_threshold: float = 10.0
    version_policy: bool = False
    version: str = "project.version"
    accept: tuple[accept.Entry, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()  # (rule, level)
    deprecation: tuple[int | None, int | None] = (1, None)  # (releases, days)
    pyproject: Path | None = None  # the file read, if any
    text: str = ""  # its text (the version policy reads the version from it)


def load(start: Path) -> Settings:
    """The settings of the project around `start` (defaults when there is no table)."""
    path = find_pyproject(start)
    if path is None:
        return Settings()
    text = read_pyproject(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return Settings(pyproject=path, text=text)  # load_config reports it, located
    table = data.get("tool", {}).get(SECTION, {})
    table = table.get(TABLE) if isinstance(table, dict) else None
    if table is None:
        return Settings(pyproject=path, text=text)
    display = display_path(path)
    problems: list[Diagnostic] = []

    def bad(key: str, message: str) -> None:
        line, col = _key_position(text, key, "" if key == TABLE else f"{SECTION}.{TABLE}")
        problems.append(Diagnostic(display, line, col, "TN802", message))

    if not isinstance(table, dict):
        bad(TABLE, f"[tool.{SECTION}.{TABLE}] must be a table")
        raise DiagnosticsError(problems)
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            bad(key, f"unknown key {key!r} in [tool.{SECTION}.{TABLE}] (known: {', '.join(KEYS)})")
            continue
        problem = _problem(key, value)
        if problem:
            bad(key, f"{TABLE}.{key} {problem}, not {_shown(value)}")
        else:
            values[key] = value
    if problems:
        raise DiagnosticsError(problems)
    return Settings(
        use=tuple(values.get("use", CATEGORIES)),
        excepted=tuple(code.upper() for code in values.get("except", ())),
        ignore=tuple(values.get("ignore", ())),
        fail_on=values.get("fail_on", "error"),
        token_threshold=float(values.get("token_threshold", 10.0)),
        version_policy=bool(values.get("version_policy", False)),
        version=values.get("version", "project.version"),
        accept=tuple(_entries(values.get("accept", ()))),
        severity=tuple(
            (str(rule).upper(), level) for rule, level in values.get("severity", {}).items()
        ),
        deprecation=(
            (values["deprecation"].get("releases"), values["deprecation"].get("days"))
            if "deprecation" in values
            else (1, None)
        ),
        pyproject=path,
        text=text,
    )


_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxdict = _SHORT.maxtuple = 8
_SHORT.maxstring = _SHORT.maxother = 120


def _shown(value: Any) -> str:
    """A value as an error quotes it: a list of thousands shows its first few."""
    return _SHORT.repr(value)


def _problem(key: str, value: Any) -> str | None:
    """What is wrong with a value (None: nothing)."""
    strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key == "use":
        if not strings or not value or any(v not in CATEGORIES for v in value):
            return f"must list some of {', '.join(CATEGORIES)}"
    elif key == "except":
        if not strings or any(v.upper() not in BREAKING for v in value):
            return f"must list rule IDs of toolnexus-gen breaking ({min(BREAKING)}-{max(BREAKING)})"
    elif key == "ignore":
        if not strings:
            return "must be a list of tool names or globs"
    elif key == "fail_on":
        if value not in LEVELS:
            return f"must be one of {', '.join(LEVELS)}"
    elif key == "token_threshold":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            return "must be a percentage (a number, 0 or more)"
    elif key == "version_policy":
        if not isinstance(value, bool):
            return "must be true or false"
    elif key == "version" and (not isinstance(value, str) or not value.strip(".")):
        return 'must be a dotted key of pyproject.toml, such as "project.version"'
    elif key == "accept":
        return _accept_problem(value)
    elif key == "severity":
        return accept.level_problem(value)
    elif key == "deprecation":
        counts = isinstance(value, dict) and all(
            k in ("releases", "days") and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in value.items()
        )
        if not counts or not value:
            return "must be a table of releases and/or days (whole numbers, 0 or more)"
    return None


ENTRY_KEYS = ("finding", "reason", "until")


def _accept_problem(value: Any) -> str | None:
    if not isinstance(value, list):
        return 'must be a list of "TOOL:RULE" or {finding = "TOOL:RULE", reason, until} tables'
    for item in value:
        if isinstance(item, dict):
            unknown = [k for k in item if k not in ENTRY_KEYS]
            if unknown:
                return f"entry has unknown key {unknown[0]!r} (known: {', '.join(ENTRY_KEYS)})"
            if not isinstance(item.get("finding"), str):
                return 'entry needs finding = "TOOL:RULE"'
            if "reason" in item and not isinstance(item["reason"], str):
                return "entry's reason must be a string"
            if "until" in item:
                problem = accept.until_problem(_until(item["until"]))
                if problem:
                    return f"entry {item['finding']!r}: {problem}"
            item = item["finding"]
        if not isinstance(item, str):
            return 'must be a list of "TOOL:RULE" or {finding = "TOOL:RULE", reason, until} tables'
        parsed = accept.parse(item)
        if isinstance(parsed, str):
            return f"entry {parsed}"
    return None


def _entries(value: Any) -> list[accept.Entry]:
    found = []
    for item in value:
        table = item if isinstance(item, dict) else {"finding": item}
        entry = accept.parse(table["finding"])
        assert isinstance(entry, accept.Entry)  # _accept_problem checked it
        until = table.get("until")
        found.append(
            accept.Entry(
                entry.tool, entry.rule, table.get("reason"), _until(until) if until else None
            )
        )
    return found


def _until(value: Any) -> Any:
    """A TOML date (`until = 2027-03-31`, unquoted) as the string a quoted one is."""
    return value.isoformat() if isinstance(value, datetime.date) else value
