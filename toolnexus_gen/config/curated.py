"""Curated third-party tools, from `[tool.toolnexus-gen]`: the OpenAPI documents `sync` keeps
(`openapi.<name>`) and the overrides a build lays over any source's tools (`overrides.<tool>`).

Read with the rest of the configuration, each mistake located in pyproject.toml (TN811-TN818).
What needs the documents or the specs (an unknown tool or argument, a fixed value its schema
refuses) is checked where they are read: commands/openapi_sync.py and pipeline/overrides.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from toolnexus_gen.config.many import Locator
from toolnexus_gen.diagnostics import masked_url
from toolnexus_gen.targets.registry import NAMES

SOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # a folder under specs/
TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")  # as spec.schema.json says for `name`
ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # ${VAR} in a fixed value
OPENAPI_KEYS = ("document", "tags", "operations", "exclude", "server", "env_prefix", "overlays")
OVERRIDE_KEYS = (
    "name",
    "description",
    "arguments",
    "hide",
    "fixed",
    "defaults",
    "exclude",
    "targets",
)
ARGUMENT_KEYS = ("name", "description")

Bad = Callable[[tuple[int, int], str, str], None]  # (place, code, message)


@dataclass(frozen=True)
class Declared:
    """`[tool.toolnexus-gen.openapi.<name>]`: an OpenAPI document `sync` re-imports into
    `specs/<name>/`."""

    name: str
    document: str  # as written: a path relative to pyproject.toml, or an https URL
    tags: tuple[str, ...] = ()
    operations: tuple[str, ...] | None = None  # operationId allowlist
    exclude: tuple[str, ...] = ()  # operationIds left out
    server: str | None = None
    env_prefix: str | None = None
    overlays: tuple[str, ...] = ()  # paths relative to pyproject.toml, applied in order
    display: str = "pyproject.toml"
    place: tuple[int, int] = (1, 1)
    places: dict[str, tuple[int, int]] = field(default_factory=dict, compare=False)

    def at(self, key: str) -> tuple[int, int]:
        return self.places.get(key, self.place)

    @property
    def remote(self) -> bool:
        return self.document[:8].lower() == "https://"  # a URL's scheme has no case


@dataclass(frozen=True)
class Override:
    """`[tool.toolnexus-gen.overrides.<tool>]`: what a build changes of one source's tool."""

    tool: str  # the name the source gives it
    name: str | None = None
    description: str | None = None
    arguments: tuple[tuple[str, str | None, str | None], ...] = ()  # (argument, name, description)
    hide: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    defaults: tuple[tuple[str, Any], ...] = ()
    exclude: bool = False
    only: tuple[str, ...] | None = None  # targets = {only = [...]}
    exclude_targets: tuple[str, ...] = ()  # targets = {exclude = [...]}
    display: str = "pyproject.toml"
    place: tuple[int, int] = (1, 1)
    # where each key stands: "name", "hide", "fixed.owner", "arguments.title", ...
    places: tuple[tuple[str, tuple[int, int]], ...] = ()

    def at(self, key: str) -> tuple[int, int]:
        found = dict(self.places)
        while key:
            if key in found:
                return found[key]
            key = key.rpartition(".")[0]
        return self.place

    def key(self) -> Any:
        """What a build's output and diagnostics depend on (the build key)."""
        return [
            self.tool,
            self.name,
            self.description,
            [list(a) for a in self.arguments],
            list(self.hide),
            [list(f) for f in self.fixed],
            [list(d) for d in self.defaults],
            self.exclude,
            self.only,
            list(self.exclude_targets),
            self.place,
            sorted(self.places),
        ]

    def summary(self) -> str:
        """What the override changes, in words (`list` prints it under the tool)."""
        parts = [f"renamed from {self.tool}"] if self.name and self.name != self.tool else []
        if self.description:
            parts.append("description")
        renamed = [f"{arg} -> {name}" for arg, name, _ in self.arguments if name]
        if renamed:
            parts.append("arguments renamed: " + ", ".join(renamed))
        described = [arg for arg, _, text in self.arguments if text]
        if described:
            parts.append("arguments described: " + ", ".join(described))
        hidden = [*self.hide, *(arg for arg, _ in self.fixed if arg not in self.hide)]
        if hidden:
            parts.append("hidden: " + ", ".join(hidden))
        if self.fixed:
            parts.append("fixed: " + ", ".join(arg for arg, _ in self.fixed))
        if self.defaults:
            parts.append("defaults: " + ", ".join(arg for arg, _ in self.defaults))
        if self.only is not None or self.exclude_targets:
            parts.append("targets")
        return "; ".join(parts) or "no change"


@dataclass(frozen=True)
class Curated:
    openapi: tuple[Declared, ...] = ()
    overrides: tuple[Override, ...] = ()

    def key(self) -> Any:
        return [o.key() for o in self.overrides]

    def override(self, tool: str) -> Override | None:
        for found in self.overrides:
            if found.tool == tool:
                return found
        return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def read_curated(section: dict[str, Any], text: str, display: str, bad: Bad) -> Curated:
    where = _Where(text)
    return Curated(
        _declared(section.get("openapi"), where, display, bad),
        _overrides(section.get("overrides"), where, display, bad),
    )


class _Where(Locator):
    """The Locator, with keys looked for inside their own table only."""

    def within(self, place: tuple[int, int], *keys: str) -> tuple[int, int]:
        """`keys` (one dotted path) of the table that starts at `place`: written dotted
        (`arguments.title = ...`), or one inside the other."""
        dotted = self._bounded(place, ".".join(keys))
        if dotted is not None:
            return dotted
        at = place
        for key in keys:
            found = self._bounded(at, key)
            if found is None:
                return at
            at = found
        return at

    def _bounded(self, place: tuple[int, int], key: str) -> tuple[int, int] | None:
        start = self._offset(place)
        end = re.compile(r"^[ \t]*\[", re.M).search(self.text, start + 1)
        found = re.compile(rf'(?:^|[{{,])[ \t]*["\']?{re.escape(key)}["\']?[ \t]*=', re.M).search(
            self.text, start, end.start() if end else len(self.text)
        )
        if found is None:
            return None
        return self.position(
            found.start() + len(found.group(0)) - len(found.group(0).lstrip(" \t{,"))
        )


def _declared(value: Any, where: _Where, display: str, bad: Bad) -> tuple[Declared, ...]:
    if not isinstance(value, dict):  # absent, or not a table (pyproject.py says so)
        return ()
    found = []
    for name, body in value.items():
        place = where.entry("openapi", name)
        if not SOURCE_NAME.fullmatch(name):
            bad(
                place,
                "TN811",
                f"openapi source name {name!r}: use letters, digits, _ and - (at most 64, not "
                "starting with _ or -): it names the folder specs/<name>/",
            )
            continue
        if not isinstance(body, dict):
            bad(place, "TN811", f'openapi.{name} must be a table (document = "...", ...)')
            continue
        made = _one_declared(name, body, where, place, display, bad)
        if made is not None:
            found.append(made)
    names = [d.name.casefold() for d in found]
    for declared in found:
        if names.count(declared.name.casefold()) > 1:
            bad(
                declared.place,
                "TN811",
                f"openapi.{declared.name}: another source differs only in case",
            )
    return tuple(found)


def _one_declared(
    name: str, body: dict[str, Any], where: _Where, place: tuple[int, int], display: str, bad: Bad
) -> Declared | None:
    places = {key: where.within(place, key) for key in body}
    ok = True

    def wrong(key: str, message: str, code: str = "TN811") -> None:
        nonlocal ok
        ok = False
        bad(places.get(key, place), code, f"openapi.{name}: {message}")

    for key in body:
        if key not in OPENAPI_KEYS:
            wrong(key, f"unknown key {key!r} (known: {', '.join(OPENAPI_KEYS)})")
    document = body.get("document")
    if document is None:
        wrong("document", "document is required: a path in the project or an https URL")
    elif not isinstance(document, str) or not document.strip() or "\x00" in document:
        wrong("document", "document must be a path in the project or an https URL")
    elif "://" in document and not _https(document):
        wrong(
            "document",
            f"document {masked_url(repr(document))}: a URL must be https (with a host, no user "
            "or password)",
            "TN812",
        )
    for key in ("tags", "operations", "exclude", "overlays"):
        if key in body and not _strings(body[key]):
            wrong(key, f"{key} must be a list of non-empty strings")
    for key in ("server", "env_prefix"):
        if key in body and not (isinstance(body[key], str) and body[key]):
            wrong(key, f"{key} must be a non-empty string")
    prefix = body.get("env_prefix")
    if isinstance(prefix, str) and prefix and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", prefix):
        wrong("env_prefix", f"env_prefix {prefix!r} must be a variable name (letters, digits, _)")
    server = body.get("server")
    if isinstance(server, str) and server and not _http(server):
        wrong("server", f"server must be an absolute http(s) URL, not {masked_url(repr(server))}")
    elif isinstance(server, str) and "@" in urlsplit(server).netloc:
        wrong(
            "server",
            f"server {masked_url(repr(server))} holds a user name or password: pyproject.toml is "
            "no place for a credential; write the URL without it and send the login in a header "
            "(an overlay's security scheme, read from the environment)",
        )
    for overlay in body.get("overlays", []) if _strings(body.get("overlays")) else []:
        if "://" in overlay:
            wrong("overlays", f"overlay {overlay!r}: overlays are files in the project")
    if not ok or not isinstance(document, str):
        return None
    operations = body.get("operations")
    return Declared(
        name,
        document,
        tuple(body.get("tags", ())),
        tuple(operations) if operations is not None else None,
        tuple(body.get("exclude", ())),
        server.rstrip("/") if isinstance(server, str) else None,
        body.get("env_prefix"),
        tuple(body.get("overlays", ())),
        display,
        place,
        places,
    )


def _https(url: str) -> bool:
    parts = urlsplit(url)
    return (
        parts.scheme == "https"
        and bool(parts.hostname)
        and parts.username is None
        and parts.password is None
        and not parts.fragment
    )


def _http(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.fragment


def _overrides(value: Any, where: _Where, display: str, bad: Bad) -> tuple[Override, ...]:
    if not isinstance(value, dict):  # absent, or not a table (pyproject.py says so)
        return ()
    found = []
    for tool, body in value.items():
        place = where.entry("overrides", tool)
        if not isinstance(body, dict):
            bad(place, "TN813", f'overrides.{tool} must be a table (name = "...", ...)')
            continue
        made = _override(tool, body, where, place, display, bad)
        if made is not None:
            found.append(made)
    return tuple(found)


def _override(
    tool: str, body: dict[str, Any], where: _Where, place: tuple[int, int], display: str, bad: Bad
) -> Override | None:
    places: dict[str, tuple[int, int]] = {key: where.within(place, key) for key in body}
    ok = True

    def wrong(key: str, message: str) -> None:
        nonlocal ok
        ok = False
        bad(places.get(key, place), "TN813", f"overrides.{tool}: {message}")

    for key in body:
        if key not in OVERRIDE_KEYS:
            wrong(key, f"unknown key {key!r} (known: {', '.join(OVERRIDE_KEYS)})")
    name = body.get("name")
    if name is not None and not (isinstance(name, str) and TOOL_NAME.fullmatch(name)):
        wrong("name", f"name {name!r} is not a tool name (ASCII letters, digits, _ . : -)")
    description = body.get("description")
    if description is not None and not (isinstance(description, str) and description.strip()):
        wrong("description", "description must be a non-empty string")
    arguments: list[tuple[str, str | None, str | None]] = []
    given = body.get("arguments", {})
    if not isinstance(given, dict):
        wrong(
            "arguments",
            "arguments must be a table: arguments.<arg> = {name = ..., description = ...}",
        )
        given = {}
    for arg, change in given.items():
        at = where.within(place, "arguments", arg)
        places[f"arguments.{arg}"] = at
        if not isinstance(change, dict) or not change or set(change) - set(ARGUMENT_KEYS):
            places.setdefault(f"arguments.{arg}", at)
            wrong(
                f"arguments.{arg}",
                f"arguments.{arg} must be a table with name and/or description",
            )
            continue
        new, text = change.get("name"), change.get("description")
        if new is not None and not (isinstance(new, str) and new):
            wrong(f"arguments.{arg}", f"arguments.{arg}.name must be a non-empty string")
        if text is not None and not (isinstance(text, str) and text.strip()):
            wrong(f"arguments.{arg}", f"arguments.{arg}.description must be a non-empty string")
        arguments.append((arg, new, text))
    hide = body.get("hide", [])
    if not _strings(hide):
        wrong("hide", "hide must be a list of argument names")
        hide = []
    tables: dict[str, dict[str, Any]] = {}
    for key in ("fixed", "defaults"):
        table = body.get(key, {})
        if not isinstance(table, dict):
            wrong(key, f"{key} must be a table: {key} = {{argument = value}}")
            table = {}
        for arg in table:
            places[f"{key}.{arg}"] = where.within(places.get(key, place), arg)
        tables[key] = table
    for arg, value in tables["fixed"].items():
        for text in _texts(value):
            if "${" in text and not ENV.search(text):
                wrong(f"fixed.{arg}", f"fixed.{arg}: write an environment variable as ${{NAME}}")
    exclude = body.get("exclude", False)
    if not isinstance(exclude, bool):
        wrong("exclude", "exclude must be true or false")
    only: tuple[str, ...] | None = None
    dropped: tuple[str, ...] = ()
    targets = body.get("targets")
    if targets is not None:
        shape = "targets = {exclude = [...]} or {only = [...]}, lists of target names"
        if not isinstance(targets, dict) or not targets or set(targets) - {"only", "exclude"}:
            wrong("targets", shape)
        else:
            for key, listed in targets.items():
                unknown = [t for t in listed if t not in NAMES] if _strings(listed) else None
                if unknown is None or unknown:
                    what = f"unknown target {unknown[0]!r}" if unknown else f"{key}: {shape}"
                    wrong("targets", f"targets: {what} (known: {', '.join(NAMES)})")
            if ok:
                only = tuple(targets["only"]) if "only" in targets else None
                dropped = tuple(targets.get("exclude", ()))
    if not ok:
        return None
    return Override(
        tool,
        name,
        description,
        tuple(arguments),
        tuple(hide),
        tuple(tables["fixed"].items()),
        tuple(tables["defaults"].items()),
        bool(exclude),
        only,
        dropped,
        display,
        place,
        tuple(sorted(places.items())),
    )


def _texts(value: Any) -> list[str]:
    """Every string inside a fixed value (a string, or one in a list or table)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _texts(item)]
    return []
