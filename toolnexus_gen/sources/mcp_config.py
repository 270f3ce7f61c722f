"""mcp.json: the MCP servers `toolnexus-gen sync` snapshots, in the format clients already use.

Every client's dialect is read: Claude Desktop's and Claude Code's `mcpServers`, Cursor's, VS
Code's `servers` (with its `inputs` and `${input:ID}`), Cline's and Roo Code's (with their
`autoApprove`, `alwaysAllow`, `disabled`, `disabledTools`, `transportType`); `type` stdio, http,
streamable-http (streamableHttp) or sse, inferred when absent; `envFile` read. What another
client's key means here is done (`disabled`: not enabled, `disabledTools`: left out); a key that
means nothing here is ignored with one note (TN419); any other key is a mistake.

Read with the position of every key and value, so each mistake is reported at its
`file:line:col`, all of them before anything connects. A server whose entry is wrong is refused
alone: the file's other servers are used. Variables are expanded (see `expand`) only for the
servers being synced; a missing one is an error naming it, and expanded values (and header,
env and envFile values) are kept as secrets that `hide()` blanks out of every message. The
runtime reads the same dialects (toolnexus_runtime/executors/mcp_config.py); one table of cases
(runtime/tests/data/mcp_dialects.json) is run against both.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Mapping
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
    "transportType",
    "command",
    "args",
    "env",
    "envFile",
    "cwd",
    "url",
    "headers",
    "enabled",
    "disabled",
    "timeout",
    "tools",
    "disabledTools",
    "prefix",
)
# What other clients write beside the servers and in a server's entry that means nothing to a
# sync or a Toolkit: ignored, each named once in a note (TN419), with why.
IGNORED_TOP_KEYS = {"$schema": "", "inputs": ""}  # inputs: read for ${input:ID} below
IGNORED_KEYS = {
    "autoApprove": "Cline's tools run without asking; nothing here asks",
    "alwaysAllow": "Roo Code's tools run without asking; nothing here asks",
    "sandboxEnabled": "VS Code's sandbox; toolnexus-gen starts the server unsandboxed",
    "sandbox": "VS Code's sandbox rules; toolnexus-gen starts the server unsandboxed",
    "dev": "VS Code's development mode (watch, debug)",
    "oauth": "Claude Code's OAuth sign-in; send a token in headers instead",
    "headersHelper": "Claude Code's header command; set headers instead",
    "description": "a note for people",
    "gallery": "where VS Code installed it from",
    "version": "VS Code's installed version",
}
# `type` (and Cline's older `transportType`) as each client spells it -> the transport
TRANSPORTS = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "remote": "http",
    "sse": "sse",
}
DEFAULT_TIMEOUT = 30.0  # seconds, for the set-up, and again for all of tools/list
MAX_TIMEOUT = 3600.0
# A server's name is a folder under the spec folder (specs/<server>/), never a hidden one.
SERVER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
VARIABLE = re.compile(r"\$\{([^}]*)\}")
REFERENCE = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
INPUT = re.compile(r"input:([A-Za-z0-9_.-]+)")
# VS Code's and Cursor's predefined variables (${workspaceFolder}, ...), in any value
PREDEFINED = ("workspaceFolder", "workspaceFolderBasename", "userHome", "pathSeparator", "/")
WORKSPACE_FOLDERS = (".vscode", ".cursor")  # a config inside one of these: its parent
MIN_SECRET = 4  # shorter values are not blanked out of messages (they would garble them)
# Where a control character is refused: HTTP forbids it in a url or header (and the transport's
# error would quote the value), and in a command or cwd it is a mistake (a trailing newline from
# a file). `args` may hold a tab or a line break as written (a `python -c` script); a variable's
# value never (TN409: a token read from a file keeps its newline). An env value may be
# multi-line (a PEM key).
NO_CONTROL = ("command", "args", "cwd", "url", "headers")
ARGS_MAY_HOLD = "\t\n\r"


@dataclass(frozen=True)
class Server:
    """One server of mcp.json (values as written until `expand`)."""

    name: str
    pointer: str  # of its entry in mcp.json
    command: tuple[str, ...] = ()  # argv of a local server (command plus args)
    env: Mapping[str, str] | None = None
    env_file: str | None = None  # VS Code's and Cursor's `envFile`, read by expand()
    cwd: str | None = None
    url: str | None = None  # a remote server's endpoint
    sse: bool = False  # the remote server speaks the older HTTP+SSE transport
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    tools: tuple[str, ...] | None = None  # the allowlist, by the server's tool names
    disabled_tools: tuple[str, ...] = ()  # Roo Code's `disabledTools`: left out
    prefix: str = ""
    secrets: tuple[str, ...] = ()  # values never to print

    @property
    def local(self) -> bool:
        return self.url is None

    @property
    def transport(self) -> str:
        return "stdio" if self.local else "SSE" if self.sse else "streamable HTTP"

    def wanted(self, tool: str) -> bool:
        """Whether the server's `tools` and `disabledTools` let the tool in."""
        return (self.tools is None or tool in self.tools) and tool not in self.disabled_tools


@dataclass(frozen=True)
class McpConfig:
    path: Path
    display: str
    servers: tuple[Server, ...]  # in file order, those whose entry is right
    positions: Positions
    # the servers whose entry is wrong, with why: each refused alone, never the whole file
    refused: Mapping[str, tuple[Diagnostic, ...]] = field(default_factory=dict)
    notes: tuple[Diagnostic, ...] = ()  # other clients' keys, ignored (TN419)
    inputs: Mapping[str, str] = field(default_factory=dict)  # VS Code's inputs: id -> description

    def server(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.name == name), None)

    @property
    def names(self) -> list[str]:
        """Every server the file names, right or refused, in file order."""
        return [*(s.name for s in self.servers), *self.refused]

    @property
    def workspace(self) -> Path:
        """${workspaceFolder}: the folder of the file, or its parent for .vscode/, .cursor/."""
        folder = self.path.resolve().parent
        return folder.parent if folder.name in WORKSPACE_FOLDERS else folder

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


def has_control(value: str, allowed: str = "") -> bool:
    """Whether `value` holds a control character (a newline, a tab, an escape, DEL, ...) other
    than those `allowed`."""
    return any(unicodedata.category(char) == "Cc" and char not in allowed for char in value)


def input_variable(input_id: str) -> str:
    """The environment variable a VS Code `${input:ID}` is read from: ID in capitals, every
    character but A-Z 0-9 _ an underscore (`github-token` -> GITHUB_TOKEN)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", input_id).upper()


def read(path: Path) -> McpConfig:
    """The servers of an mcp.json, in any client's dialect. A file that cannot be read as one
    is a located DiagnosticsError; a server whose entry is wrong is refused alone
    (`McpConfig.refused`, each mistake at its `file:line:col`)."""
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
    if reader.problems:  # the file itself is wrong (no server table, two of them, ...)
        raise DiagnosticsError(reader.problems)
    return McpConfig(
        path,
        display,
        tuple(servers),
        positions,
        reader.refused,
        tuple(reader.noted()),
        reader.inputs,
    )


class _Reader:
    def __init__(self, display: str, positions: Positions) -> None:
        self.display = display
        self.positions = positions
        self.problems: list[Diagnostic] = []  # of the file, or of the server being read
        self.refused: dict[str, tuple[Diagnostic, ...]] = {}
        self.ignored: dict[str, list[tuple[str, str]]] = {}  # key -> [(server, pointer)]
        self.inputs: dict[str, str] = {}

    def bad(self, pointer: str, message: str, code: str = "TN402", at_key: bool = True) -> None:
        line, col = self.positions.key(pointer) if at_key else self.positions.value(pointer)
        self.problems.append(Diagnostic(self.display, line, col, code, message))

    def noted(self) -> list[Diagnostic]:
        """One TN419 note per ignored key, at its first place, naming every server with it."""
        notes = []
        for key, places in self.ignored.items():
            line, col = self.positions.key(places[0][1])
            names = ", ".join(dict.fromkeys(server for server, _ in places))
            why = IGNORED_KEYS.get(key) or "not a setting of toolnexus-gen"
            where = f" (servers {names})" if names else ""
            notes.append(
                Diagnostic(
                    self.display,
                    line,
                    col,
                    "TN419",
                    f"{key!r} is ignored{where}: {why}",
                    Severity.WARNING,
                )
            )
        return notes

    def config(self, data: Any) -> list[Server]:
        if not isinstance(data, dict):
            self.bad("", "an MCP configuration is a JSON object with an mcpServers object")
            return []
        tables = [key for key in SERVER_TABLES if key in data]
        for key in data:
            if (
                key not in SERVER_TABLES
                and key not in IGNORED_TOP_KEYS
                and not key.startswith("x-")
            ):
                self.ignored.setdefault(key, []).append(("", f"/{key}"))
        self.inputs = self.read_inputs(data.get("inputs"))
        if not tables:
            self.bad(
                "",
                f"no mcpServers object (nor servers, nor mcp): nothing to sync (keys: "
                f"{', '.join(map(repr, data)) or 'none'})",
            )
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
            before = len(self.problems)
            server = self.server(name, join_pointer(pointer, name), entry)
            found = self.problems[before:]
            del self.problems[before:]
            if found:
                self.refused[name] = tuple(found)
            elif server is not None:
                servers.append(server)
        return servers

    def read_inputs(self, inputs: Any) -> dict[str, str]:
        """VS Code's `inputs`: {id: description}, for the messages of ${input:ID}."""
        found: dict[str, str] = {}
        for item in inputs if isinstance(inputs, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                described = item.get("description")
                found[item["id"]] = described if isinstance(described, str) else ""
        return found

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
        if entry.get("disabled") is True or entry.get("enabled") is False:
            del self.problems[count:]  # never started: what it holds is not checked
            return Server(name=name, pointer=pointer, enabled=False)
        values: dict[str, Any] = {}
        for key, value in entry.items():
            at = join_pointer(pointer, key)
            if key.startswith("x-"):
                continue
            if key in IGNORED_KEYS:
                self.ignored.setdefault(key, []).append((name, at))
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
        kind = values.get("type") or values.get("transportType")
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
        elif kind == "stdio" and command is None:
            self.bad(pointer, f"server {name!r} is type 'stdio' but has no command", "TN403")
        elif kind in ("http", "sse") and url is None:
            self.bad(pointer, f"server {name!r} is type {kind!r} but has no url", "TN403")
        local_only = ("args", "env", "envFile", "cwd") if url is not None else ()
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
        return Server(
            name=name,
            pointer=pointer,
            command=argv + tuple(values.get("args", ())),
            env=values.get("env"),
            env_file=values.get("envFile"),
            cwd=values.get("cwd"),
            url=url,
            sse=kind == "sse",
            headers=values.get("headers", {}),
            timeout=float(values.get("timeout", DEFAULT_TIMEOUT)),
            tools=tuple(values["tools"]) if "tools" in values else None,
            disabled_tools=tuple(values.get("disabledTools", ())),
            prefix=values.get("prefix", name),
        )

    def value(self, name: str, key: str, at: str, value: Any) -> Any:
        """The value of one server key, or None (and a problem) when it is wrong."""

        def wrong(expected: str) -> None:
            self.bad(at, f"server {name!r}: {key} must be {expected}, not {value!r}")

        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if key in ("type", "transportType"):
            if value not in TRANSPORTS:
                wrong(f"one of {', '.join(map(repr, TRANSPORTS))}")
                return None
            return TRANSPORTS[value]
        if key == "command":
            if not (isinstance(value, str) and value.strip()) and not (strings and value):
                wrong("a non-empty string (plus args) or a non-empty array of strings")
                return None
        elif key in ("args", "tools", "disabledTools"):
            if not strings:
                wrong("an array of strings")
                return None
        elif key == "env":
            # VS Code writes numbers, and null for "not set"
            if not isinstance(value, dict) or not all(
                v is None or (isinstance(v, (str, int, float)) and not isinstance(v, bool))
                for v in value.values()
            ):
                wrong("an object of strings")
                return None
            value = {k: str(v) for k, v in value.items() if v is not None}
        elif key == "headers":
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                wrong("an object of strings")
                return None
        elif key == "url":
            if not isinstance(value, str) or not (
                value.startswith(("http://", "https://")) or value.startswith("${")
            ):
                wrong("an http:// or https:// URL")
                return None
        elif key in ("cwd", "prefix", "envFile"):
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
            allowed = ARGS_MAY_HOLD if key == "args" else ""
            texts = value.values() if isinstance(value, dict) else [value]
            if any(
                has_control(t, allowed) for v in texts for t in ([v] if isinstance(v, str) else v)
            ):
                self.bad(at, f"server {name!r}: {key} holds a control character (value not shown)")
                return None
        return value


def expand(
    config: McpConfig, server: Server, environ: Mapping[str, str]
) -> tuple[Server, list[Diagnostic]]:
    """The server with every variable expanded and its envFile read; its secrets recorded.
    Problems (a variable that is not set, a reference that is not a variable, an envFile that
    cannot be read) are diagnostics naming the variable or file, never a value.

    Variables, in any value: `${VAR}`, `${VAR:-default}` and `${env:VAR}` from the
    environment; VS Code's `${input:ID}` from the environment variable ID (or its capitals,
    input_variable); `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`,
    `${pathSeparator}` and `${/}` as VS Code and Cursor fill them in."""
    problems: list[Diagnostic] = []
    secrets: list[str] = []
    workspace = config.workspace
    predefined = {
        "workspaceFolder": str(workspace),
        "workspaceFolderBasename": workspace.name,
        "userHome": str(Path.home()),
        "pathSeparator": os.sep,
        "/": os.sep,
    }

    def refuse(code: str, message: str, key: str) -> str:
        problems.append(config.diagnostic(server, code, f"server {server.name!r}: {message}", key))
        return ""

    def one(text: str, key: str) -> str:
        def substitute(match: re.Match[str]) -> str:
            inner = match.group(1)
            if inner in predefined:
                return predefined[inner]
            asked = INPUT.fullmatch(inner)
            if asked is not None:
                input_id = asked.group(1)
                names = list(dict.fromkeys([input_id, input_variable(input_id)]))
                found = next((environ[n] for n in names if n in environ), None)
                described = config.inputs.get(input_id)
                if found is None:
                    what = f" ({described})" if described else ""
                    return refuse(
                        "TN404",
                        f"input {input_id!r}{what} (in {key}) is read from the environment "
                        f"variable {names[-1]}, which is not set",
                        key,
                    )
                variable, value = names[-1], found
                secrets.extend(secret_forms(value))
            else:
                reference = REFERENCE.fullmatch(inner)
                if reference is None:
                    return refuse(
                        "TN404",
                        f"{match.group(0)!r} in {key} is not a variable this file can use "
                        "(${NAME}, ${NAME:-default}, ${env:NAME}, ${input:ID}, "
                        "${workspaceFolder}, ${userHome})",
                        key,
                    )
                variable, default = reference.groups()
                found = environ.get(variable)
                if found is None:
                    if default is None:
                        return refuse(
                            "TN404", f"environment variable {variable} (in {key}) is not set", key
                        )
                    value = default
                else:
                    value = found
                    secrets.extend(secret_forms(value))
            if key in NO_CONTROL and has_control(value):
                return refuse(
                    "TN409",
                    f"environment variable {variable} (in {key}) holds a control character (a "
                    "trailing newline?); its value is not printed",
                    key,
                )
            return value

        return VARIABLE.sub(substitute, text)

    command = tuple(
        one(part, "command" if i == 0 else "args") for i, part in enumerate(server.command)
    )
    env: dict[str, str] | None = None
    if server.env_file is not None:
        env = _env_file(config, server, one(server.env_file, "envFile"), refuse)
        secrets += [form for v in env.values() for form in secret_forms(v)]
    if server.env is not None:
        env = {**(env or {}), **{k: one(v, "env") for k, v in server.env.items()}}
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


def _env_file(
    config: McpConfig, server: Server, name: str, refuse: Callable[[str, str, str], str]
) -> dict[str, str]:
    """The variables of an envFile (relative to the configuration file's folder): `NAME=value`
    lines, `export ` allowed, `#` comments, values in '...' taken as written, in "..." with
    \\n and \\" read as escapes."""
    path = config.path.parent / name if name else config.path.parent
    try:
        text = path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        refuse("TN402", f"envFile {name!r} cannot be read: {why}", "envFile")
        return {}
    return parse_env_file(text)


ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*")


def parse_env_file(text: str) -> dict[str, str]:
    """dotenv lines as VS Code and Cursor read them (see _env_file)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = ENV_LINE.fullmatch(line)
        if match is None:
            continue
        name, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        elif " #" in value:  # a comment after an unquoted value
            value = value.split(" #", 1)[0].rstrip()
        found[name] = value
    return found
