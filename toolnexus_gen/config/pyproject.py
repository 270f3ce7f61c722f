"""`[tool.toolnexus-gen]` in the nearest pyproject.toml: defaults that command-line flags override."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_gen.config.curated import Curated, read_curated
from toolnexus_gen.config.many import Many, read_many
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, masked_url
from toolnexus_gen.fs.numbers import json_number_problem
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.targets.registry import NAMES, OPTIONS, reach_options

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SECTION = "toolnexus-gen"
PATH_KEYS = ("specs", "out", "skills", "mcp_config")  # paths, relative to the pyproject.toml
# profile = "reach": every tool to every target, each step a warning.
PROFILES = ("reach",)


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _table(value: Any) -> str | None:
    return None if isinstance(value, dict) else "a table"


def _strings(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return None if ok else "a list of strings"


def _elsewhere(value: Any) -> str | None:
    return None  # checked by the module that reads it (`reader`)


@dataclass(frozen=True)
class Key:
    """One key of [tool.toolnexus-gen]: what a user may write, and what it means.

    The reference page (docs: Configuration) is made from this table, and the reader below
    refuses any key that is not in it, so a key added here is documented by construction."""

    name: str
    kind: str  # the TOML type, as a user writes it
    default: str  # what applies when the key is absent
    meaning: str  # one or two sentences, markdown
    example: str  # a TOML value the reader accepts (the docs' tests check it does)
    check: Callable[[Any], str | None] = _elsewhere  # what the value must be, or None when fine
    reader: str = "config/pyproject.py"  # the module that reads it


KEYS: dict[str, Key] = {
    key.name: key
    for key in (
        Key(
            "specs",
            "string (path)",
            '"specs"',
            "The spec folder, relative to pyproject.toml. The `SPECS_DIR` argument overrides it.",
            '"specs"',
            _string,
        ),
        Key(
            "out",
            "string (path)",
            "`tools/` beside the spec folder",
            "The output package the build owns, relative to pyproject.toml. `--out` overrides it.",
            '"src/myapp/tools"',
            _string,
        ),
        Key(
            "targets",
            "list of target names",
            "all six",
            "The provider files to write: "
            "`gemini`, `openai`, `openai_responses`, `anthropic`, `mcp`, `bedrock`. `--target` "
            "overrides it.",
            '["openai", "anthropic"]',
            _strings,
        ),
        Key(
            "ignore",
            "list of codes",
            "`[]`",
            "Diagnostic codes to silence everywhere. Structural errors (TN1xx) cannot be silenced.",
            '["TN204"]',
            _strings,
        ),
        Key(
            "name_aliases",
            "boolean",
            '`false` (`true` under `profile = "reach"`)',
            "A tool or property name a target rejects gets, in that target's file only, a "
            "deterministic alias it accepts; every round trip maps it back.",
            "true",
            _boolean,
        ),
        Key(
            "codegen_keywords",
            "boolean",
            "`false`",
            "The project's own specs may use the model generator's keywords that name Python "
            "code (`customTypePath`, `customBasePath`, `x-python-type`, `x-python-import`, any "
            "`custom...` or `x-python-...`): the argument models then import what they name. "
            "A synced server's snapshot never may, and `sync` and `import openapi` strip them.",
            "true",
            _boolean,
        ),
        Key(
            "profile",
            "string",
            "none",
            '`"reach"`: every tool to every target, each step '
            "it takes reported as a warning (name aliases, `strictify`, `describe`, Gemini's "
            "`parametersJsonSchema` per declaration, untyped roots taken as objects).",
            '"reach"',
            _string,
        ),
        Key(
            "builtins",
            "boolean, list of names or table",
            "`false`",
            "The built-in tools to "
            'include: `true` (all ten), a list (`["read", "grep"]`) or a table that '
            "turns some off (`{tools = {bash = false}}`).",
            '["read", "grep", "glob"]',
        ),
        Key(
            "skills",
            "string (path)",
            "none",
            "A folder whose `**/SKILL.md` files join one `skill` tool.",
            '"skills"',
            _string,
            "sources/skills.py",
        ),
        Key(
            "base_url",
            "string (URL)",
            "none",
            "What relative `http.url`s in specs are appended to (an absolute http(s) URL).",
            '"https://api.example.com/v1"',
            _string,
        ),
        Key(
            "mcp_config",
            "string (path)",
            '"mcp.json"',
            "The MCP client configuration that `toolnexus-gen sync` reads.",
            '"mcp.json"',
            _string,
            "sources/mcp_config.py",
        ),
        Key(
            "toolsets",
            "table of tables",
            "none",
            "Named subsets of the tools: "
            "`name = {groups = [...], tools = [...], max_tool_tokens = N}`.",
            '{support = {tools = ["now"]}}',
            reader="config/many.py",
        ),
        Key(
            "hosted",
            "table",
            "none",
            "Provider-executed tools (web search, code execution, "
            "...): `name = true` for a known one, or each provider's own entry.",
            "{web_search = true}",
            reader="config/many.py",
        ),
        Key(
            "max_tool_tokens",
            "integer",
            "none",
            "The estimated tokens of tool definitions "
            "a request may carry before a warning (TN462); also per toolset.",
            "4000",
            reader="config/many.py",
        ),
        Key(
            "tool_search",
            "string",
            '"bm25"',
            'The Anthropic tool search tool deferred tools use: `"bm25"` or `"regex"`.',
            '"regex"',
            reader="config/many.py",
        ),
        Key(
            "breaking",
            "table",
            "all categories, no exceptions",
            "`toolnexus-gen breaking` and `changelog`: `use` (categories), `except` (rule IDs), "
            "`ignore` (tool names or globs), `fail_on`, `token_threshold`, `version_policy`, "
            "`version` (see Breaking changes).",
            '{use = ["callers", "handlers"]}',
            _table,
            reader="breaking/config.py",
        ),
        Key(
            "openapi",
            "table of tables",
            "none",
            "OpenAPI documents `toolnexus-gen sync` keeps in `specs/<name>/`: "
            '`<name> = {document = "apis/api.json", operations = [...], tags = [...], '
            'exclude = [...], server = "https://...", env_prefix = "NAME", '
            'overlays = ["apis/api.overlay.yaml"]}` (see Curating third-party tools).',
            '{github = {document = "apis/github.json", operations = ["issues/create"]}}',
            _table,
            reader="config/curated.py",
        ),
        Key(
            "overrides",
            "table of tables",
            "none",
            "Changes a build lays over a tool from a source (OpenAPI, MCP, built-ins): "
            "`<tool> = {name, description, arguments.<arg> = {name, description}, hide = [...], "
            'fixed = {arg = value or "${VAR}"}, defaults = {...}, exclude = true, '
            "targets = {exclude = [...]}}` (see Curating third-party tools).",
            '{read = {description = "Read a file of the workspace."}}',
            _table,
            reader="config/curated.py",
        ),
    )
}


@dataclass(frozen=True)
class Setting:
    """A [tool.toolnexus-gen] value that a source reads, and where it is written: what the
    source finds wrong with it (or makes of it) is reported there."""

    value: Any
    display: str  # the pyproject.toml, as diagnostics show it
    line: int
    col: int


@dataclass(frozen=True)
class Config:
    root: Path  # folder of the pyproject.toml (or the working folder when there is none)
    path: Path | None  # the pyproject.toml read, if any
    specs: Path | None = None
    out: Path | None = None
    targets: tuple[str, ...] | None = None
    ignore: frozenset[str] = frozenset()
    name_aliases: bool = False
    codegen_keywords: bool = False  # the project's own specs may name Python code for models
    profile: str | None = None
    base_url: str | None = None  # what relative `http` URLs in specs are appended to
    mcp_config: Path | None = None
    target_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    builtins: Setting | None = None  # the value as written (bool, list of names, or a table)
    skills: Setting | None = None  # its value: the skills folder (a Path)
    many: Many = field(default_factory=Many)
    curated: Curated = field(default_factory=Curated)  # openapi sources and overrides


def find_pyproject(start: Path) -> Path | None:
    for folder in (start.resolve(), *start.resolve().parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(path: Path) -> str:
    """The text of a pyproject.toml; not UTF-8 is a located TN802 (TOML files are UTF-8)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        message = (
            f"pyproject.toml is not UTF-8 (byte 0x{raw[exc.start]:02x}); TOML files are UTF-8: "
            "save it as UTF-8"
        )
        raise DiagnosticsError(
            [Diagnostic(display_path(path), line, col, "TN802", message)]
        ) from None


def load_config(start: Path) -> Config:
    path = find_pyproject(start)
    if path is None:
        return Config(root=start.resolve(), path=None)
    display = display_path(path)
    text = read_pyproject(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, col = _toml_error_position(str(exc))
        raise DiagnosticsError(
            [Diagnostic(display, line, col, "TN801", f"invalid TOML: {exc}")]
        ) from None
    except ValueError as exc:  # an integer too long to read (tomllib lets it through)
        message, line, col = json_number_problem(text, exc) or (str(exc), 1, 1)
        raise DiagnosticsError(
            [Diagnostic(display, line, col, "TN801", f"invalid TOML: {message}")]
        ) from None
    section = data.get("tool", {}).get(SECTION)
    if section is None:
        return Config(root=path.parent, path=path)
    problems: list[Diagnostic] = []

    def bad(key: str, message: str, table: str = "") -> None:
        line, col = _key_position(text, key, table)
        problems.append(Diagnostic(display, line, col, "TN802", message))

    if not isinstance(section, dict):
        bad(SECTION, f"[tool.{SECTION}] must be a table")
        raise DiagnosticsError(problems)
    values: dict[str, Any] = {}
    options: dict[str, dict[str, Any]] = {}
    for key, value in section.items():
        if key in NAMES and isinstance(value, dict):
            options[key] = _target_options(key, value, bad)
        elif key not in KEYS:
            known = ", ".join([*KEYS, *NAMES])
            bad(key, f"unknown key {key!r} in [tool.{SECTION}] (known: {known})")
        elif key == "builtins":
            problem = _builtins_problem(value)
            if problem:
                bad(key, problem)
            else:
                values[key] = value
        elif KEYS[key].reader in ("config/many.py", "breaking/config.py", "config/curated.py"):
            wanted = KEYS[key].check(value)  # its shape; its module reads the rest
            if wanted:
                bad(key, f"{key} must be {wanted}, not {value!r}")
        elif (
            key in PATH_KEYS
            and isinstance(value, str)
            and not (value.strip() and "\x00" not in value)
        ):
            what = "an empty string" if not value.strip() else "a NUL character"
            bad(key, f"{key} must name a path relative to pyproject.toml, not {what}")
        else:
            wanted = KEYS[key].check(value)
            if wanted:
                bad(key, f"{key} must be {wanted}, not {value!r}")
            else:
                values[key] = value
    for name in values.get("targets", []):
        if name not in NAMES:
            bad("targets", f"unknown target {name!r} (known: {', '.join(NAMES)})")
    profile = values.get("profile")
    if profile is not None and profile not in PROFILES:
        bad("profile", f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    if profile == "reach":
        values.setdefault("name_aliases", True)
        for name in NAMES:  # added to each target's own transforms (strictify where it exists)
            options[name] = reach_options(name, options.get(name, {}))
    base_url = values.get("base_url")
    if base_url is not None and not _is_http_url(base_url):
        bad(
            "base_url",
            "base_url must be an absolute http(s) URL without user:password, not "
            f"{masked_url(repr(base_url))}",
        )

    def bad_at(place: tuple[int, int], code: str, message: str) -> None:
        problems.append(Diagnostic(display, place[0], place[1], code, message))

    many = read_many(section, text, display, bad_at)
    curated = read_curated(section, text, display, bad_at)
    if problems:
        raise DiagnosticsError(problems)
    root = path.parent

    def setting(key: str, value: Any) -> Setting | None:
        if key not in values:
            return None
        return Setting(value, display, *_key_position(text, key))

    return Config(
        root=root,
        path=path,
        specs=root / values["specs"] if "specs" in values else None,
        out=root / values["out"] if "out" in values else None,
        targets=tuple(values["targets"]) if "targets" in values else None,
        ignore=frozenset(values.get("ignore", [])),
        name_aliases=bool(values.get("name_aliases", False)),
        codegen_keywords=bool(values.get("codegen_keywords", False)),
        profile=profile,
        base_url=base_url,
        mcp_config=root / values["mcp_config"] if "mcp_config" in values else None,
        target_options=options,
        builtins=setting("builtins", values.get("builtins")),
        skills=setting("skills", root / values["skills"] if "skills" in values else None),
        many=many,
        curated=curated,
    )


def _builtins_problem(value: Any) -> str | None:
    """What is wrong with the shape of `builtins` (the names are the source's to check)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    if isinstance(value, dict) and set(value) <= {"tools"}:
        tools = value.get("tools", {})
        if isinstance(tools, dict) and all(isinstance(v, bool) for v in tools.values()):
            return None
    return (
        "builtins must be true, false, a list of tool names, or a table "
        f"{{tools = {{bash = false}}}}, not {value!r}"
    )


def _is_http_url(text: str) -> bool:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        return (
            parts.scheme in ("http", "https")
            and bool(parts.hostname)
            and "@" not in parts.netloc  # user:password would be copied into dispatch.py
            and not parts.fragment
        )
    except ValueError:  # an unclosed IPv6 bracket, a port that is no number
        return False


def _target_options(target: str, value: dict[str, Any], bad: Any) -> dict[str, Any]:
    allowed: dict[str, tuple[str, ...]] = OPTIONS[target]
    for key, option in value.items():
        if key not in allowed:
            bad(
                key,
                f"unknown option {key!r} for target {target} (known: {', '.join(allowed) or 'none'})",
                f"{SECTION}.{target}",
            )
        elif isinstance(option, list):
            unknown = [item for item in option if item not in allowed[key]]
            if unknown or key != "transforms":
                bad(
                    key,
                    f"{target}.{key}: unknown value(s) {', '.join(map(repr, unknown)) or repr(option)} "
                    f"(known: {', '.join(allowed[key])})",
                    f"{SECTION}.{target}",
                )
        elif key == "transforms" or option not in allowed[key]:
            bad(
                key,
                f"{target}.{key} must be one of {', '.join(map(repr, allowed[key]))}, not {option!r}",
                f"{SECTION}.{target}",
            )
    return dict(value)


def _key_position(text: str, key: str, table: str = "") -> tuple[int, int]:
    """Where `key = ...` stands inside [tool.<table>] (TOML parsers keep no positions)."""
    header = re.compile(r"^\s*\[\s*tool\.(?:\"toolnexus-gen\"|toolnexus-gen)(\.[\w.-]+)?\s*\]")
    wanted = f".{table.split('.', 1)[1]}" if "." in table else None
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        match = header.match(line)
        if match:
            inside = match.group(1) == wanted
            if inside and key == SECTION:
                return number, 1
            continue
        if line.lstrip().startswith("["):
            inside = False
        if inside:
            found = re.match(rf"^(\s*)[\"']?{re.escape(key)}[\"']?\s*=", line)
            if found:
                return number, len(found.group(1)) + 1
    if not table:  # written as a table of its own: [tool.toolnexus-gen.<key>]
        for number, line in enumerate(text.splitlines(), 1):
            match = header.match(line)
            if match and (match.group(1) or "").split(".")[1:2] == [key]:
                return number, 1
    return 1, 1


def _toml_error_position(message: str) -> tuple[int, int]:
    match = re.search(r"line (\d+), column (\d+)", message)
    return (int(match.group(1)), int(match.group(2))) if match else (1, 1)
