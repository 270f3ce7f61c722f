"""`Toolkit(handlers, mcp_config=...)`: mcp.json as every client writes it.

Claude Desktop's and Claude Code's `mcpServers`, Cursor's, VS Code's `servers` (with its `inputs`
and `${input:ID}`), Cline's and Roo Code's (`autoApprove`, `alwaysAllow`, `disabled`,
`disabledTools`, `transportType`); `type` stdio, http, streamable-http (streamableHttp) or sse,
inferred when absent; `envFile` read. A key of another client that means nothing here is
ignored; any other unknown key is a mistake. The generator reads the same dialects
(toolnexus_gen/sources/mcp_config.py, which also says what is ignored), and one table of cases,
runtime/tests/data/mcp_dialects.json, is run against both.

A whole file that cannot be read is a ValueError when the Toolkit first needs it; a server whose
entry is wrong fails only the tools of that server, when one of them is first called (its
`ServerSettings` cannot be made), never the file's other servers.

Variables, in command, args, env, envFile, cwd, url and headers, expanded for a server when its
settings are made: `${VAR}`, `${VAR:-default}` and `${env:VAR}` from the environment;
`${input:ID}` (VS Code) from the environment variable ID, else ID in capitals with every
character but A-Z 0-9 _ an underscore (`github-token` -> GITHUB_TOKEN); `${workspaceFolder}`
(the file's folder, or its parent for .vscode/ and .cursor/), `${workspaceFolderBasename}`,
`${userHome}`, `${pathSeparator}` and `${/}`. A missing variable is an error naming it; values
are never in a message.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .base import secret_forms

SERVER_TABLES = ("mcpServers", "servers", "mcp")
SERVER_KEYS = frozenset(
    {"type", "transportType", "command", "args", "env", "envFile", "cwd", "url", "headers"}
    | {"enabled", "disabled", "timeout", "tools", "disabledTools", "prefix"}
)
# other clients' keys that mean nothing to a Toolkit (the generator's sync notes each one)
IGNORED_KEYS = frozenset(
    {"autoApprove", "alwaysAllow", "sandboxEnabled", "sandbox", "dev", "oauth"}
    | {"headersHelper", "description", "gallery", "version"}
)
TRANSPORTS = {
    "stdio": "stdio",
    "local": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "remote": "http",
    "sse": "sse",
}
DEFAULT_TIMEOUT = 30.0
VARIABLE = re.compile(r"\$\{([^}]*)\}")
REFERENCE = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
INPUT = re.compile(r"input:([A-Za-z0-9_.-]+)")
WORKSPACE_FOLDERS = (".vscode", ".cursor")
MIN_SECRET = 4
# a control character is refused in these (a literal tab or line break is fine in args: a
# `python -c` script); a variable's value never holds one there; env values may be multi-line
NO_CONTROL = ("command", "args", "cwd", "url", "headers")
ARGS_MAY_HOLD = "\t\n\r"


@dataclass(frozen=True)
class ServerSettings:
    """How to reach one server, every variable expanded."""

    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    transport: str = "stdio"  # stdio, http (streamable HTTP) or sse (HTTP+SSE)
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    secrets: tuple[str, ...] = ()

    def hide(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


def read_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(where it came from, the servers by name, as written). Only what spoils the whole file
    is an error here; each server's entry is checked by settings_for."""
    if isinstance(config, Mapping):
        where, data, base = "mcp_config", config, Path.cwd()
    else:
        path = Path(config)
        where, base = str(path), path.resolve().parent
        try:
            data = json.loads(path.read_text("utf-8-sig"))
        except OSError as exc:
            raise ValueError(f"mcp_config: cannot read {path}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: an MCP configuration is an object with mcpServers")
    table = next((data[key] for key in SERVER_TABLES if key in data), None)
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: no mcpServers object (nor servers, nor mcp)")
    declared = data.get("inputs")
    inputs = {
        item["id"]: item.get("description") if isinstance(item.get("description"), str) else ""
        for item in (declared if isinstance(declared, list) else [])
        if isinstance(item, Mapping) and isinstance(item.get("id"), str)
    }
    return where, {
        name: {"_entry": entry, "_base": base, "_inputs": inputs} for name, entry in table.items()
    }


def input_variable(input_id: str) -> str:
    """The environment variable a VS Code `${input:ID}` is read from when ID itself is not set."""
    return re.sub(r"[^A-Za-z0-9_]", "_", input_id).upper()


def settings_for(where: str, name: str, entry: Mapping[str, Any]) -> ServerSettings:
    """One server's settings (`entry` as read_config gives it), checked and expanded. A
    disabled server needs none of its variables: its tools answer that it is disabled."""
    raw, base, inputs = (
        entry.get("_entry"),
        entry.get("_base", Path.cwd()),
        entry.get("_inputs", {}),
    )
    if raw is None and "_entry" not in entry:  # a server entry given directly
        raw = {k: v for k, v in entry.items() if not k.startswith("_")}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: server {name!r} must be an object")
    if raw.get("enabled", True) is False or raw.get("disabled") is True:
        return ServerSettings(name=name, enabled=False)
    unknown = [
        k for k in raw if k not in SERVER_KEYS and k not in IGNORED_KEYS and not k.startswith("x-")
    ]
    if unknown:
        raise ValueError(
            f"{where}: server {name!r}: unknown key {unknown[0]!r} "
            f"(known: {', '.join(sorted(SERVER_KEYS))})"
        )
    kind = raw.get("type", raw.get("transportType"))
    if kind is not None and kind not in TRANSPORTS:
        raise ValueError(
            f"{where}: server {name!r}: type must be one of {', '.join(map(repr, TRANSPORTS))}"
        )
    if ("command" in raw) == ("url" in raw):
        raise ValueError(f"{where}: server {name!r} needs either a command or a url")
    transport = TRANSPORTS.get(kind, "stdio" if "command" in raw else "http")
    if (transport == "stdio") != ("command" in raw):
        raise ValueError(
            f"{where}: server {name!r} is type {kind!r} but has no {'url' if 'command' in raw else 'command'}"
        )
    secrets: list[str] = []
    folder = Path(base)
    workspace = folder.parent if folder.name in WORKSPACE_FOLDERS else folder
    predefined = {
        "workspaceFolder": str(workspace),
        "workspaceFolderBasename": workspace.name,
        "userHome": str(Path.home()),
        "pathSeparator": os.sep,
        "/": os.sep,
    }

    def text(value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: server {name!r}: {key} must be a string, not {value!r}")

        def substitute(match: re.Match[str]) -> str:
            inner = match.group(1)
            if inner in predefined:
                return predefined[inner]
            asked = INPUT.fullmatch(inner)
            if asked is not None:
                input_id = asked.group(1)
                names = list(dict.fromkeys([input_id, input_variable(input_id)]))
                found = next((os.environ[n] for n in names if n in os.environ), None)
                if found is None:
                    described = inputs.get(input_id)
                    what = f" ({described})" if described else ""
                    raise ValueError(
                        f"{where}: server {name!r}: input {input_id!r}{what} (in {key}) is read "
                        f"from the environment variable {names[-1]}, which is not set"
                    )
                variable = names[-1]
                secrets.extend(secret_forms(found, MIN_SECRET))
            else:
                reference = REFERENCE.fullmatch(inner)
                if reference is None:
                    raise ValueError(
                        f"{where}: server {name!r}: {match.group(0)!r} in {key} is not a "
                        "variable this file can use (${NAME}, ${NAME:-default}, ${env:NAME}, "
                        "${input:ID}, ${workspaceFolder}, ${userHome})"
                    )
                variable, default = reference.groups()
                found = os.environ.get(variable)
                if found is None:
                    if default is None:
                        raise ValueError(
                            f"{where}: server {name!r}: environment variable {variable} (in "
                            f"{key}) is not set"
                        )
                    found = default
                else:
                    secrets.extend(secret_forms(found, MIN_SECRET))
            if key in NO_CONTROL and _has_control(found):
                raise ValueError(
                    f"{where}: server {name!r}: environment variable {variable} (in {key}) holds "
                    "a control character (a trailing newline?); its value is not printed"
                )
            return found

        allowed = ARGS_MAY_HOLD if key == "args" else ""
        if key in NO_CONTROL and _has_control(value, allowed):
            raise ValueError(f"{where}: server {name!r}: {key} holds a control character")
        return VARIABLE.sub(substitute, value)

    def strings(value: Any, key: str) -> dict[str, str]:
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: server {name!r}: {key} must be an object of strings")
        if key == "env":  # VS Code writes numbers, and null for "not set"
            value = {
                k: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                for k, v in value.items()
                if v is not None
            }
        return {k: text(v, key) for k, v in value.items()}

    command = raw.get("command")
    argv = list(command) if isinstance(command, list) else [] if command is None else [command]
    args = raw.get("args", [])
    if not isinstance(args, list):
        raise ValueError(f"{where}: server {name!r}: args must be an array of strings")
    argv = [text(part, "command" if i == 0 else "args") for i, part in enumerate([*argv, *args])]
    if command is not None and not argv:
        raise ValueError(f"{where}: server {name!r}: command is empty")
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"{where}: server {name!r}: timeout must be a number of seconds above 0")
    env: dict[str, str] | None = None
    if "envFile" in raw:
        env = _env_file(where, name, folder / text(raw["envFile"], "envFile"))
        secrets += [form for v in env.values() for form in secret_forms(v, MIN_SECRET)]
    if "env" in raw:
        env = {**(env or {}), **strings(raw["env"], "env")}
    headers = strings(raw.get("headers", {}), "headers")
    cwd = text(raw["cwd"], "cwd") if "cwd" in raw else None
    url = text(raw["url"], "url") if "url" in raw else None
    if url is not None and not url.startswith(("http://", "https://")):
        raise ValueError(f"{where}: server {name!r}: url must be http:// or https://")
    secrets += [
        form
        for v in (*headers.values(), *(env or {}).values(), *_url_secrets(url))
        for form in secret_forms(v, MIN_SECRET)
    ]
    return ServerSettings(
        name=name,
        command=tuple(argv),
        env=env,
        cwd=str(folder / cwd) if cwd is not None else None,
        url=url,
        transport=transport,
        headers=headers,
        timeout=float(timeout),
        secrets=tuple(dict.fromkeys(secrets)),
    )


def _url_secrets(url: str | None) -> list[str]:
    """What a URL may carry as a credential, written in mcp.json as it is: its password and the
    values of its query (`?api_key=...`), hidden from messages as `${VAR}` values are."""
    if url is None:
        return []
    parts = urlsplit(url)
    try:
        password = parts.password
    except ValueError:  # pragma: no cover (urlsplit parses lazily: a bad port)
        password = None
    values = [value for _, value in parse_qsl(parts.query, keep_blank_values=False)]
    return [v for v in (password, *values) if v]


def _has_control(value: str, allowed: str = "") -> bool:
    return any(unicodedata.category(char) == "Cc" and char not in allowed for char in value)


ENV_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*")


def _env_file(where: str, name: str, path: Path) -> dict[str, str]:
    try:
        text = path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ValueError(
            f"{where}: server {name!r}: envFile {str(path)!r} cannot be read: {why}"
        ) from None
    return parse_env_file(text)


def parse_env_file(text: str) -> dict[str, str]:
    """dotenv lines as VS Code and Cursor read them: `NAME=value`, `export ` allowed, `#`
    comments, values in '...' as written, in "..." with \\n and \\" read as escapes."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = ENV_LINE.fullmatch(line)
        if match is None:
            continue
        key, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        found[key] = value
    return found
