"""The intermediate representation.

A `Tool` is one validated spec with everything the per-spec stage needs (schemas, source
positions); a `ToolInfo` is the small part of it the whole-set stage needs, and a `ToolSet` is
the frozen, name-sorted set of those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .diagnostics import Diagnostic

if TYPE_CHECKING:
    from .bundle import Located
    from .load import Document


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

    @property
    def display(self) -> str:
        return self.source.display

    def place(self, key: str) -> tuple[int, int]:
        """(line, col) of the value of a top-level key of the spec (or of its nearest parent)."""
        return self.source.positions.value(f"/{key}")


# The top-level keys that whole-set diagnostics point at (ToolInfo keeps their places).
PLACED_KEYS = ("name", "strict")


@dataclass(frozen=True)
class ToolInfo:
    """What the whole-set stage needs of one tool: its names, where whole-set diagnostics point,
    and what the per-request limits count. Made from a Tool, or read back from the build cache."""

    name: str
    description: str
    python: PyNames
    display: str  # the spec file, as diagnostics show it
    places: tuple[tuple[int, int], ...]  # place() of each PLACED_KEYS entry, in that order
    targets: frozenset[str] | None = None
    strict: bool | None = None
    strict_counts: tuple[int, int] = (0, 0)  # optional and union parameters (Anthropic strict)

    def for_target(self, target: str) -> bool:
        return self.targets is None or target in self.targets

    def place(self, key: str) -> tuple[int, int]:
        return self.places[PLACED_KEYS.index(key)]


@dataclass(frozen=True)
class ToolSet:
    tools: tuple[ToolInfo, ...]  # sorted by name
    targets: tuple[str, ...]  # selected provider targets, in registry order


@dataclass(frozen=True)
class ModelJob:
    """What generating one tool's model takes, and where to point if it fails."""

    schema: dict[str, Any]
    class_name: str
    module: str
    display: str
    place: tuple[int, int]  # of the input schema in its spec
    pointer: str


@dataclass
class Unit:
    """Everything the build makes of one spec file on its own (units.py); reusable by a later
    build while its key still holds (reuse.py)."""

    rel: str  # the spec file, relative to the spec folder
    key: str  # unit_key of what it was made from
    reached: tuple[str, ...]  # the files its $refs reach, relative to the spec folder
    diagnostics: tuple[Diagnostic, ...]
    info: ToolInfo | None  # None when the spec has an error
    entries: dict[str, str] = field(default_factory=dict)  # file -> this tool's encoded entry
    model_key: str | None = None
    model_job: ModelJob | None = None  # made in this build: what generates its model if need be
