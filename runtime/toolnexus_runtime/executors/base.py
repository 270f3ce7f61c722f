"""What every executor module builds on: the options a toolkit gives its bound tools, the shape
of a bound tool and of an executor, the toolkit as an executor sees it, and the forms of a
secret to hide. The kinds' modules import this, never the package's registry of kinds
(`KINDS` in executors/__init__.py), which imports them by name: no import circle.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

from ..nested import refuse_nested

if TYPE_CHECKING:
    from ..datatypes import ToolContext, ToolSpec

H_co = TypeVar("H_co", covariant=True)

BoundTool = Callable[[BaseModel, "ToolContext"], Awaitable[Any]]
"""A bound tool: called with the validated arguments and the call's context; returns what a
handler returns (text, data, a pydantic model), a `ToolResult` (kept as it is: its own output
and data), or raises `ToolError` for an error result."""


@dataclass(frozen=True)
class SourceOptions:
    """What `Toolkit(...)` was told about the world its bound tools reach. Each executor reads
    the fields of its kind; see `toolnexus_runtime.Toolkit` for their meaning."""

    mcp_config: str | PathLike[str] | Mapping[str, Any] | None = None
    workspace: str | PathLike[str] | None = None
    allow_shell: bool = True
    fetch_allow: Collection[str] | None = None
    output_limit: int = 30_000
    ask: Callable[..., Any] | None = None
    http_client: Any = None
    base_url: str | Mapping[str, str] | None = None


class ToolkitView(Protocol[H_co]):
    """The toolkit an executor is made for, as the executor sees it. The toolkit's class builds
    on the executors (its registry makes them), so they name it by this, never by its class."""

    @property
    def SCHEMAS(self) -> str | None: ...

    @property
    def handlers(self) -> H_co: ...


class Executor(Protocol):
    """One kind of bound tool, for one Toolkit: made once, asked for each tool's function, closed
    by `Toolkit.aclose()`."""

    def bind(self, spec: ToolSpec) -> BoundTool: ...

    async def aclose(self) -> None: ...


class AsWritten:
    """Checks a call's arguments with the tool's typed model and hands on the arguments as the
    model wrote them (the toolkit calls `validate` in place of the model): a URL without the
    slash pydantic's AnyUrl adds, a number or a date as written. Only the arguments the model
    keeps are handed on (an extra key it ignores is not); a key inside an argument that its
    object does not declare refuses the call (nested.py)."""

    def __init__(self, model: type[BaseModel]) -> None:
        self._check = model.__pydantic_validator__.validate_python
        self._wire: dict[str, str] = {}  # a field's alias or own name -> the name sent
        for name, info in model.model_fields.items():
            alias = info.alias or name
            self._wire[alias] = alias
            self._wire.setdefault(name, alias)

    def validate(self, arguments: Any) -> Any:
        model = self._check(arguments)  # raises ValidationError: the toolkit answers the model
        if type(arguments) is not dict:  # a model instance a caller passed: its own values
            return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
        refuse_nested(model, arguments)  # an undeclared key inside an argument is never sent
        extra = model.model_extra or {}
        wire = self._wire
        return {
            wire.get(key, key): value
            for key, value in arguments.items()
            if key in wire or key in extra
        }


def secret_forms(secret: str, minimum: int) -> list[str]:
    """A secret as it is and as a message may quote it, each form of `minimum` characters or
    more: JSON-escaped (also with `\\/`, as PHP writes it), escaped as in a str's or a bytes'
    repr (an HTTP library's error shows `b'Bearer sk-...\\n'`), percent-encoded (either case of
    hex). Every source hides all of them from what it reports."""
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    encoded = quote(secret, safe="")
    forms = [
        secret,
        escaped,
        escaped.replace("/", "\\/"),
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogateescape"))[2:-1],
        encoded,
        re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded),
        quote_plus(secret),
        quote(secret),
    ]
    return [form for form in dict.fromkeys(forms) if len(form) >= minimum]
