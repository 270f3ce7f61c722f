"""Reading the MCP configuration at run time: mcp.json as clients write it (`mcpServers`, also
`servers` or `mcp`), each server's settings checked and `${VAR}` / `${VAR:-default}` expanded from
the environment (a missing variable is an error naming it; values are never shown: every form
of a secret that a message could quote is hidden)."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .base import secret_forms

SERVER_TABLES = ("mcpServers", "servers", "mcp")
SERVER_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "url", "headers"}
    | {"enabled", "disabled", "timeout", "tools", "prefix"}
)
DEFAULT_TIMEOUT = 30.0
VARIABLE = re.compile(r"\$\{([^}]*)\}")
REFERENCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
MIN_SECRET = 4
NO_CONTROL = ("command", "args", "cwd", "url", "headers")  # env values may be multi-line


@dataclass(frozen=True)
class ServerSettings:
    """How to reach one server, `${VAR}` expanded."""

    name: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    secrets: tuple[str, ...] = ()

    def hide(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text


# -- configuration ------------------------------------------------------------------------------


def read_config(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(where it came from, the servers by name, as written)."""
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
    servers = {}
    for name, entry in table.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: server {name!r} must be an object")
        unknown = [k for k in entry if k not in SERVER_KEYS and not k.startswith("x-")]
        if unknown:
            raise ValueError(
                f"{where}: server {name!r}: unknown key {unknown[0]!r} "
                f"(known: {', '.join(sorted(SERVER_KEYS))})"
            )
        if ("command" in entry) == ("url" in entry):
            raise ValueError(f"{where}: server {name!r} needs either a command or a url")
        servers[name] = {**entry, "_base": base}
    return where, servers


def settings_for(where: str, name: str, entry: Mapping[str, Any]) -> ServerSettings:
    """One server's settings, checked and `${VAR}` expanded (values never in a message). A
    disabled server needs none of its variables: its tools answer that it is disabled."""
    if entry.get("enabled", True) is False or entry.get("disabled") is True:
        return ServerSettings(name=name, enabled=False)
    secrets: list[str] = []

    def text(value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: server {name!r}: {key} must be a string, not {value!r}")

        def substitute(match: re.Match[str]) -> str:
            reference = REFERENCE.fullmatch(match.group(1))
            if reference is None:
                raise ValueError(
                    f"{where}: server {name!r}: {match.group(0)!r} in {key} is not an "
                    "environment variable reference (use ${NAME} or ${NAME:-default})"
                )
            variable, default = reference.groups()
            found = os.environ.get(variable)
            if found is None:
                if default is None:
                    raise ValueError(
                        f"{where}: server {name!r}: environment variable {variable} (in {key}) "
                        "is not set"
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

        expanded = VARIABLE.sub(substitute, value)
        if key in NO_CONTROL and _has_control(expanded):
            raise ValueError(f"{where}: server {name!r}: {key} holds a control character")
        return expanded

    def strings(value: Any, key: str) -> dict[str, str]:
        if not isinstance(value, Mapping):
            raise ValueError(f"{where}: server {name!r}: {key} must be an object of strings")
        return {k: text(v, key) for k, v in value.items()}

    command = entry.get("command")
    argv = list(command) if isinstance(command, list) else [] if command is None else [command]
    argv += entry.get("args", [])
    argv = [text(part, "command" if i == 0 else "args") for i, part in enumerate(argv)]
    if command is not None and not argv:
        raise ValueError(f"{where}: server {name!r}: command is empty")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"{where}: server {name!r}: timeout must be a number of seconds above 0")
    env = strings(entry["env"], "env") if "env" in entry else None
    headers = strings(entry.get("headers", {}), "headers")
    cwd = text(entry["cwd"], "cwd") if "cwd" in entry else None
    secrets += [
        form
        for v in (*headers.values(), *(env or {}).values())
        for form in secret_forms(v, MIN_SECRET)
    ]
    return ServerSettings(
        name=name,
        command=tuple(argv),
        env=env,
        cwd=str(entry["_base"] / cwd) if cwd is not None else None,
        url=text(entry["url"], "url") if "url" in entry else None,
        headers=headers,
        timeout=float(timeout),
        secrets=tuple(dict.fromkeys(secrets)),
    )


def _has_control(value: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in value)
