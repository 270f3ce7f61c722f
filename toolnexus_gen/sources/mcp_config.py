"""mcp.json: the MCP servers `toolnexus-gen sync` snapshots, in the format clients already use.

Read with the position of every key and value, so each mistake is reported at its
`file:line:col` (all of them, before anything connects). `${VAR}` (and `${VAR:-default}`) in a
server's command, args, env, cwd, url and headers is expanded from the environment only for the
servers being synced; a missing variable is an error naming it, and expanded values (and header
and env values) are kept as secrets that `hide()` blanks out of every message.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.ir import Positions
from toolnexus_gen.toolspec.load import LoadError, parse_json
from toolnexus_gen.toolspec.pointer import join_pointer

SERVER_TABLES = ("mcpServers", "servers", "mcp")  # where clients keep the servers
SERVER_KEYS = (
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "enabled",
    "disabled",
    "timeout",
    "tools",
    "prefix",
)
LOCAL_TYPES = ("stdio", "local")
REMOTE_TYPES = ("http", "streamable-http", "streamableHttp", "remote")
DEFAULT_TIMEOUT = 30.0  # seconds, for the set-up, and again for all of tools/list
MAX_TIMEOUT = 3600.0
# A server's name is a folder under the spec folder (specs/<server>/), never a hidden one.
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
VARIABLE = re.compile(r"\$\{([^}]*)\}")
REFERENCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
MIN_SECRET = 4  # shorter values are not blanked out of messages (they would garble them)
# Where a control character in an expanded value is refused: HTTP forbids it in a url or header
# (and the transport's error would quote the value), and in a command line it is a mistake (a
# trailing newline from a file). An env value may be multi-line (a PEM key).
NO_CONTROL = ("command", "args", "cwd", "url", "headers")


@dataclass(frozen=True)
class Server:
    """One server of mcp.json (values as written until `expand`)."""

    name: str
    pointer: str  # of its entry in mcp.json
    command: tuple[str, ...] = ()  # argv of a local server (command plus args)
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None  # a remote server's streamable HTTP endpoint
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    tools: tuple[str, ...] | None = None  # the allowlist, by the server's tool names
    prefix: str = ""
    secrets: tuple[str, ...] = ()  # values never to print

    @property
    def local(self) -> bool:
        return self.url is None

    @property
    def transport(self) -> str:
        return "stdio" if self.local else "streamable HTTP"


@dataclass(frozen=True)
class McpConfig:
    path: Path
    display: str
    servers: tuple[Server, ...]  # in file order
    positions: Positions

    def server(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.name == name), None)

    def diagnostic(
        self,
        server: Server,
        code: str,
        message: str,
        key: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> Diagnostic:
        """A diagnostic at the server's entry (or at one of its keys)."""
        pointer = join_pointer(server.pointer, key) if key else server.pointer
        line, col = self.positions.key(pointer)
        return Diagnostic(self.display, line, col, code, message, severity)


def sanitise(name: str) -> str:
    """A name as providers take it: every character but A-Z a-z 0-9 _ - becomes `_`."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


def spec_name(server: Server, tool: str) -> str:
    """The spec name of a server's tool: `<prefix>_<tool>`, sanitised."""
    return sanitise(f"{server.prefix}_{tool}" if server.prefix else tool)


def hide(text: str, server: Server) -> str:
    """`text` with the server's secrets blanked out (longest first, so none shows in part)."""
    for secret in sorted(server.secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def secret_forms(value: str) -> list[str]:
    """A secret as messages may quote it: as is, escaped as in a str's or a bytes' repr, and as
    in JSON (a library's error shows `b'Bearer sk-...\\n'`, not the value itself)."""
    forms = [
        value,
        repr(value)[1:-1],
        repr(value.encode("utf-8", "surrogateescape"))[2:-1],
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
    ]
    return [form for form in dict.fromkeys(forms) if len(form) >= MIN_SECRET]


def has_control(value: str) -> bool:
    """Whether `value` holds a control character (a newline, a tab, an escape, DEL, ...)."""
    return any(unicodedata.category(char) == "Cc" for char in value)


def read(path: Path) -> McpConfig:
    """The servers of an mcp.json; every problem is a located diagnostic (DiagnosticsError)."""
    display = display_path(path)

    def fail(code: str, message: str, line: int = 1, col: int = 1) -> LoadError:
        return LoadError(Diagnostic(display, line, col, "TN401", message))

    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DiagnosticsError(
            [
                Diagnostic(
                    display,
                    1,
                    1,
                    "TN401",
                    "no such file: set mcp_config under [tool.toolnexus-gen] in pyproject.toml "
                    '(default "mcp.json", beside it) to the file that lists your MCP servers',
                )
            ]
        ) from None
    try:
        text = raw.decode("utf-8-sig")
        data, positions = parse_json(text, fail)
    except UnicodeDecodeError as exc:
        raise DiagnosticsError(
            [Diagnostic(display, 1, 1, "TN401", f"not UTF-8 (byte offset {exc.start})")]
        ) from None
    except LoadError as exc:
        raise DiagnosticsError([exc.diagnostic]) from None
    reader = _Reader(display, positions)
    servers = reader.config(data)
    if reader.problems:
        raise DiagnosticsError(reader.problems)
    return McpConfig(path, display, tuple(servers), positions)


class _Reader:
    def __init__(self, display: str, positions: Positions) -> None:
        self.display = display
        self.positions = positions
        self.problems: list[Diagnostic] = []

    def bad(self, pointer: str, message: str, code: str = "TN402", at_key: bool = True) -> None:
        line, col = self.positions.key(pointer) if at_key else self.positions.value(pointer)
        self.problems.append(Diagnostic(self.display, line, col, code, message))

    def config(self, data: Any) -> list[Server]:
        if not isinstance(data, dict):
            self.bad("", "an MCP configuration is a JSON object with an mcpServers object")
            return []
        tables = [key for key in SERVER_TABLES if key in data]
        for key in data:
            if key not in SERVER_TABLES and key != "$schema" and not key.startswith("x-"):
                self.bad(
                    f"/{key}",
                    f"unknown key {key!r} (servers go under {', '.join(SERVER_TABLES)}; keys "
                    "starting with x- are ignored)",
                )
        if not tables:
            self.bad("", "no mcpServers object (nor servers, nor mcp): nothing to sync")
            return []
        if len(tables) > 1:
            self.bad(f"/{tables[1]}", f"both {tables[0]!r} and {tables[1]!r}: keep one of them")
        pointer = f"/{tables[0]}"
        table = data[tables[0]]
        if not isinstance(table, dict):
            self.bad(pointer, f"{tables[0]} must be an object of servers by name")
            return []
        servers = []
        for name, entry in table.items():
            server = self.server(name, join_pointer(pointer, name), entry)
            if server is not None:
                servers.append(server)
        return servers

    def server(self, name: str, pointer: str, entry: Any) -> Server | None:
        count = len(self.problems)
        if not SERVER_NAME.fullmatch(name):
            self.bad(
                pointer,
                f"server name {name!r}: use letters, digits, _ . - (starting with a letter or "
                "digit); it names the snapshot's folder",
            )
        if not isinstance(entry, dict):
            self.bad(pointer, f"server {name!r} must be an object (command or url, ...)")
            return None
        values: dict[str, Any] = {}
        for key, value in entry.items():
            at = join_pointer(pointer, key)
            if key.startswith("x-"):
                continue
            if key not in SERVER_KEYS:
                self.bad(
                    at,
                    f"server {name!r}: unknown key {key!r} (known: {', '.join(SERVER_KEYS)}; "
                    "keys starting with x- are ignored)",
                )
                continue
            checked = self.value(name, key, at, value)
            if checked is not None:
                values[key] = checked
        kind = values.get("type")
        command, url = values.get("command"), values.get("url")
        if len(self.problems) > count and ("command" in entry or "url" in entry):
            return None  # a wrong command or url was reported; saying "neither" would mislead
        if command is not None and url is not None:
            self.bad(pointer, f"server {name!r} has both command and url: keep one", "TN403")
        elif command is None and url is None:
            self.bad(
                pointer,
                f"server {name!r} has neither command (a local server) nor url (a remote one)",
                "TN403",
            )
        elif kind in LOCAL_TYPES and command is None:
            self.bad(pointer, f"server {name!r} is type {kind!r} but has no command", "TN403")
        elif kind in REMOTE_TYPES and url is None:
            self.bad(pointer, f"server {name!r} is type {kind!r} but has no url", "TN403")
        local_only = ("args", "env", "cwd") if url is not None else ()
        remote_only = ("headers",) if command is not None else ()
        for key in (*local_only, *remote_only):
            if key in values:
                where = "local (command)" if key in local_only else "remote (url)"
                self.bad(
                    join_pointer(pointer, key), f"server {name!r}: {key} is for a {where} server"
                )
        if len(self.problems) > count:
            return None
        argv = tuple(command if isinstance(command, list) else [command] if command else [])
        enabled = values.get("enabled", True) and not values.get("disabled", False)
        return Server(
            name=name,
            pointer=pointer,
            command=argv + tuple(values.get("args", ())),
            env=values.get("env"),
            cwd=values.get("cwd"),
            url=url,
            headers=values.get("headers", {}),
            enabled=enabled,
            timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
            tools=tuple(values["tools"]) if "tools" in values else None,
            prefix=values.get("prefix", name),
        )

    def value(self, name: str, key: str, at: str, value: Any) -> Any:
        """The value of one server key, or None (and a problem) when it is wrong."""

        def wrong(expected: str) -> None:
            self.bad(at, f"server {name!r}: {key} must be {expected}, not {value!r}")

        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if key == "type":
            if value == "sse":
                self.bad(
                    at,
                    f"server {name!r}: type 'sse' (the deprecated HTTP+SSE transport) is not "
                    "supported; use the server's streamable HTTP endpoint",
                )
                return None
            if value not in LOCAL_TYPES + REMOTE_TYPES:
                wrong(f"one of {', '.join(map(repr, LOCAL_TYPES + REMOTE_TYPES))}")
                return None
        elif key == "command":
            if not (isinstance(value, str) and value.strip()) and not (strings and value):
                wrong("a non-empty string (plus args) or a non-empty array of strings")
                return None
        elif key in ("args", "tools"):
            if not strings:
                wrong("an array of strings")
                return None
        elif key in ("env", "headers"):
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                wrong("an object of strings")
                return None
        elif key == "url":
            if not isinstance(value, str) or not (
                value.startswith(("http://", "https://")) or value.startswith("${")
            ):
                wrong("an http:// or https:// URL")
                return None
        elif key in ("cwd", "prefix"):
            if not isinstance(value, str):
                wrong("a string")
                return None
        elif key in ("enabled", "disabled"):
            if not isinstance(value, bool):
                wrong("true or false")
                return None
        elif key == "timeout":
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 < value <= MAX_TIMEOUT
                or not math.isfinite(value)
            ):
                hint = " (seconds, not milliseconds)" if isinstance(value, (int, float)) else ""
                wrong(f"a number of seconds above 0 and at most {MAX_TIMEOUT:g}{hint}")
                return None
        if key in NO_CONTROL:
            texts = value.values() if isinstance(value, dict) else [value]
            if any(has_control(t) for v in texts for t in ([v] if isinstance(v, str) else v)):
                self.bad(at, f"server {name!r}: {key} holds a control character (value not shown)")
                return None
        return value


def expand(
    config: McpConfig, server: Server, environ: Mapping[str, str]
) -> tuple[Server, list[Diagnostic]]:
    """The server with every `${VAR}` expanded; its secrets recorded. Problems (a variable that
    is not set, a reference that is not a variable) are diagnostics naming the variable only."""
    problems: list[Diagnostic] = []
    secrets: list[str] = []

    def one(text: str, key: str) -> str:
        def substitute(match: re.Match[str]) -> str:
            reference = REFERENCE.fullmatch(match.group(1))
            if reference is None:
                problems.append(
                    config.diagnostic(
                        server,
                        "TN404",
                        f"server {server.name!r}: {match.group(0)!r} in {key} is not an "
                        "environment variable reference (use ${NAME} or ${NAME:-default})",
                        key,
                    )
                )
                return ""
            variable, default = reference.groups()
            value = environ.get(variable)
            if value is None:
                if default is None:
                    problems.append(
                        config.diagnostic(
                            server,
                            "TN404",
                            f"server {server.name!r}: environment variable {variable} (in {key}) "
                            "is not set",
                            key,
                        )
                    )
                    return ""
                value = default
            else:
                secrets.extend(secret_forms(value))
            if key in NO_CONTROL and has_control(value):
                problems.append(
                    config.diagnostic(
                        server,
                        "TN409",
                        f"server {server.name!r}: environment variable {variable} (in {key}) holds "
                        "a control character (a trailing newline?); its value is not printed",
                        key,
                    )
                )
                return ""
            return value

        return VARIABLE.sub(substitute, text)

    command = tuple(
        one(part, "command" if i == 0 else "args") for i, part in enumerate(server.command)
    )
    env = {k: one(v, "env") for k, v in server.env.items()} if server.env is not None else None
    headers = {k: one(v, "headers") for k, v in server.headers.items()}
    url = one(server.url, "url") if server.url is not None else None
    cwd = one(server.cwd, "cwd") if server.cwd is not None else None
    if cwd is not None:  # relative to the configuration file, as every path in it
        cwd = str((config.path.parent / cwd).resolve())
    if url is not None and not url.startswith(("http://", "https://")) and not problems:
        problems.append(
            config.diagnostic(
                server, "TN402", f"server {server.name!r}: url must be http:// or https://", "url"
            )
        )
    secrets += [
        form for v in (*headers.values(), *(env or {}).values()) for form in secret_forms(v)
    ]
    expanded = replace(
        server,
        command=command,
        env=env,
        headers=headers,
        url=url,
        cwd=cwd,
        secrets=tuple(dict.fromkeys(secrets)),
    )
    return expanded, problems
