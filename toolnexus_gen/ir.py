"""The intermediate representation: a frozen, name-sorted set of validated tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .load import Document

if TYPE_CHECKING:
    from .bundle import Located


@dataclass(frozen=True)
class PyNames:
    method: str  # ToolHandlers method
    model: str  # argument model class, e.g. GetWeatherArgs
    module: str  # models/<module>.py


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any] | None  # None: the tool takes no arguments
    python: PyNames
    source: Document
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    examples: tuple[dict[str, Any], ...] = ()
    strict: bool | None = None
    annotations: dict[str, Any] | None = None
    targets: frozenset[str] | None = None  # None: every selected target
    # pointer of the input schema inside the source document ("/input_schema" or "" for a bare schema)
    schema_pointer: str = "/input_schema"
    # the input schema, bundled (cross-file refs in its own $defs), with where each part came from
    located: Located | None = None
    output_located: Located | None = None  # the same for output_schema

    def for_target(self, target: str) -> bool:
        return self.targets is None or target in self.targets


@dataclass(frozen=True)
class ToolSet:
    tools: tuple[Tool, ...]  # sorted by name
    targets: tuple[str, ...]  # selected provider targets, in registry order
