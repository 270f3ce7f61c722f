"""Curated tools: a source's tool (an HTTP endpoint, an MCP server's tool, a built-in) as a
project's overrides made it, mapped back to what the source expects on every call.

The build writes such a tool's binding as `{"curated": {"binding": <the source's binding>,
"rename": {name the model sees: the source's name}, "fixed": {argument: value},
"defaults": {argument: value}, "constants": {argument: value}, "hidden": [argument]}}`. The
registry binds the inner binding with its own kind's executor (shared with the toolkit's other
tools of that kind) and wraps it here: the arguments are validated by the curated model (the
names the model sees), renamed back, the defaults the model left out added, each constant (a
hidden argument's default) set as written, and each fixed value set, `${VAR}` in it read from
the environment at this call (never written into a file): only the project's own fixed values
read the environment, never a value a source gave. A source's name outside the curated surface
(hidden, or renamed) is never taken from the model. Values read from the environment are
blanked out of an error's text and of the result (a server that echoes the request), as a
source's secrets are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from ..content import Text
from ..datatypes import SourceError, ToolContext, ToolError, ToolResult
from .base import AsWritten, BoundTool, secret_forms

ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_MINIMUM = 4  # characters of an environment value blanked out of an error's text


class _Values:
    """The arguments, renamed back, for a source whose tools read a model (`model_dump`)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def model_dump(self, *, exclude_none: bool = False, **_: Any) -> dict[str, Any]:
        if exclude_none:
            return {key: value for key, value in self._values.items() if value is not None}
        return dict(self._values)


class Curated(AsWritten):
    """One curated tool: validates with the curated model, calls the source's bound tool."""

    def __init__(
        self, name: str, model: type[BaseModel], inner: BoundTool, settings: Mapping[str, Any]
    ) -> None:
        super().__init__(model)
        self.name = name
        self._inner = inner
        # the source's bound tool takes what its own `validate` returns (the arguments as
        # sent); one without a `validate` takes a model
        self._takes_values = hasattr(inner, "validate")
        self._rename: dict[str, str] = dict(settings.get("rename", {}))
        self._fixed: dict[str, Any] = dict(settings.get("fixed", {}))
        self._defaults: dict[str, Any] = dict(settings.get("defaults", {}))
        self._constants: dict[str, Any] = dict(settings.get("constants", {}))
        # the source's names the model may not send: a renamed argument's old name, a hidden
        # one (fixed, a constant, or nothing at all); the model's names are the rename's keys
        self._taken = frozenset(
            {*self._rename.values(), *self._fixed, *self._constants, *settings.get("hidden", ())}
            - self._rename.keys()
        )

    async def __call__(self, arguments: Any, ctx: ToolContext) -> Any:
        values = dict(arguments) if isinstance(arguments, Mapping) else {}
        # a source's name outside the curated surface: an extra the model made up (where the
        # schema takes other keys) is never what the source gets
        taken = self._taken
        sent = {
            self._rename.get(key, key): value for key, value in values.items() if key not in taken
        }
        for key, value in self._defaults.items():
            sent.setdefault(key, value)
        sent.update(self._constants)  # as written: never read from the environment
        read: list[str] = []
        for key, value in self._fixed.items():
            sent[key] = self._expand(value, read)
        try:
            if self._takes_values:
                out = await self._inner(sent, ctx)  # type: ignore[arg-type]
            else:
                out = await self._inner(_Values(sent), ctx)  # type: ignore[arg-type]
        except ToolError as exc:
            text = _blanked(str(exc), read)
            if text == str(exc):
                raise
            raise type(exc)(text) from None
        return _blanked(out, read) if read else out

    def _expand(self, value: Any, read: list[str]) -> Any:
        if isinstance(value, str):

            def one(match: re.Match[str]) -> str:
                found = os.environ.get(match.group(1))
                if found is None:
                    raise SourceError(
                        f"Tool '{self.name}': the environment variable {match.group(1)} is not "
                        "set (a fixed argument of this tool reads it)"
                    )
                read.append(found)
                return found

            return ENV.sub(one, value)
        if isinstance(value, list):
            return [self._expand(item, read) for item in value]
        if isinstance(value, dict):
            return {key: self._expand(item, read) for key, item in value.items()}
        return value


def _blanked(value: Any, secrets: list[str]) -> Any:
    """`value` (an error's text, or a result: text, JSON data, a ToolResult with its parts) with
    every form of each secret (`secret_forms`) blanked out: a server that echoes the request
    gives the model no environment value either."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            for form in secret_forms(secret, SECRET_MINIMUM):
                value = value.replace(form, "***")
        return value
    if isinstance(value, list):
        return [_blanked(item, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(_blanked(item, secrets) for item in value)
    if isinstance(value, dict):
        return {_blanked(k, secrets): _blanked(v, secrets) for k, v in value.items()}
    if isinstance(value, ToolResult):
        return replace(
            value,
            output=_blanked(value.output, secrets),
            data=_blanked(value.data, secrets),
            content=tuple(_blanked(part, secrets) for part in value.content),
        )
    if isinstance(value, Text):
        return Text(_blanked(value.text, secrets))
    return value
