"""The intermediate representation.

A `Tool` is one validated spec with everything the per-spec stage needs (schemas, source
positions); a `ToolInfo` is the small part of it the whole-set stage needs, and a `ToolSet` is
the frozen, name-sorted set of those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic


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
    deprecated: bool | dict[str, Any] | None = None  # true, or {since, note}
    targets: frozenset[str] | None = None  # None: every selected target
    # how the tool runs when it is not a handler method: {kind: settings} (an MCP server's tool,
    # an HTTP endpoint, a built-in); the runtime's executor of that kind runs it
    binding: dict[str, Any] | None = None
    groups: tuple[str, ...] = ()  # what toolsets select it by
    defer_loading: bool = False  # loaded on demand, through a tool search
    profile: str | None = None  # the spec's own profile ("reach"), beside the project's
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
PLACED_KEYS = ("name", "strict", "defer_loading", "groups", "profile")


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
    # (target, optional parameters, union parameters) for each target with per-request strict
    # limits (Anthropic) whose entry goes out strict: what the entry, as emitted, counts there
    strict_costs: tuple[tuple[str, int, int], ...] = ()
    # name_aliases: (target, the name that target's file gives the tool), where it differs
    aliases: tuple[tuple[str, str], ...] = ()
    # name_aliases: (target, JSON of its ArgumentMap), where property names differ
    argument_aliases: tuple[tuple[str, str], ...] = ()
    # strictify: (target, JSON {"map": properties it made nullable, "defs": the same per $defs
    # entry}), where it did
    null_maps: tuple[tuple[str, str], ...] = ()
    binding: str | None = None  # Tool.binding as canonical JSON; None: a handler method
    groups: tuple[str, ...] = ()
    defer_loading: bool = False
    profile: str | None = None  # the spec's own profile (Tool.profile)
    # a deferred tool's namespace where a target groups deferred tools (OpenAI Responses): its
    # MCP server, else its first group; None: it stands alone
    namespace: str | None = None
    # (target, estimated tokens of the tool's entry in that target's file): pipeline/tokens.py
    tokens: tuple[tuple[str, int], ...] = ()

    @property
    def has_method(self) -> bool:
        """Whether the tool is a method of ToolHandlers (else its binding runs it)."""
        return self.binding is None

    def sent_name(self, target: str) -> str:
        """The tool's name in `target`'s file."""
        for name, alias in self.aliases:  # a loop, not a dict: called per tool and target
            if name == target:
                return alias
        return self.name

    def for_target(self, target: str) -> bool:
        return self.targets is None or target in self.targets

    def place(self, key: str) -> tuple[int, int]:
        return self.places[PLACED_KEYS.index(key)]

    def tokens_for(self, target: str) -> int:
        for name, count in self.tokens:
            if name == target:
                return count
        return 0

    def strict_cost(self, target: str) -> tuple[int, int] | None:
        """(optional, union parameters) of its strict entry for `target`; None: not strict
        there (or the target has no per-request strict limits)."""
        for name, optional, unions in self.strict_costs:
            if name == target:
                return optional, unions
        return None


@dataclass(frozen=True)
class ToolSet:
    tools: tuple[ToolInfo, ...]  # sorted by name
    targets: tuple[str, ...]  # selected provider targets, in registry order
    files: tuple[str, ...] = ()  # files sources add to the package (Contribution.files)
    # each configured toolset's tools, by name (config order; members in name order)
    toolsets: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # (target, tools strictify made strict that go out non-strict to keep every request within
    # the target's per-request strict limits: pipeline/strictness.py)
    relaxed: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class ModelJob:
    """What generating one tool's model takes, and where to point if it fails."""

    schema: dict[str, Any]
    class_name: str
    module: str
    display: str
    place: tuple[int, int]  # of the input schema in its spec
    pointer: str


class Packed:
    """An encoded entry kept compressed (zlib, fast level) while the build makes the other
    units: at 10,000 tools the entries of every provider file are a gigabyte as text."""

    __slots__ = ("data",)

    def __init__(self, text: str) -> None:
        import zlib

        self.data = zlib.compress(text.encode("utf-8"), 1)

    def __str__(self) -> str:
        import zlib

        return zlib.decompress(self.data).decode("utf-8")


def entry_text(entry: str | Packed) -> str:
    """A unit's encoded entry as text (a Packed one unpacked)."""
    return entry if isinstance(entry, str) else str(entry)


@dataclass
class Unit:
    """Everything the build makes of one spec file on its own (units.py); reusable by a later
    build while its key still holds (reuse.py)."""

    rel: str  # the spec file, relative to the spec folder
    key: str  # unit_key of what it was made from
    reached: tuple[str, ...]  # the files its $refs reach, relative to the spec folder
    diagnostics: tuple[Diagnostic, ...]
    info: ToolInfo | None  # None when the spec has an error
    # file -> this tool's encoded entry (Packed while a command line's build holds them all)
    entries: dict[str, str | Packed] = field(default_factory=dict)
    model_key: str | None = None
    model_job: ModelJob | None = None  # made in this build: what generates its model if need be
    model_input: str | None = None  # spec.load.model_input of the spec file
    # the memo keys of the checks it passed (meta-schema, examples): kept in the memo while the
    # unit is, so that an edit of the spec that leaves them as they are need not check again
    passed: tuple[str, ...] = ()
    # rel, then the SHA-256 of the spec and of each file in `reached`: what its key was made
    # from. While they are the same, so is the key (a later build need not make it to compare)
    made_of: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contributed:
    """A spec a source makes in memory (a built-in tool, the skill tool). It goes through the
    pipeline as a spec file's document does; its binding says how it runs."""

    rel: str  # the name its unit is kept under: never a spec file's path ("builtin:read")
    document: Document  # its data; display and positions: where its diagnostics point
    binding: dict[str, Any]  # {kind: settings}, as Tool.binding


@dataclass(frozen=True)
class Contribution:
    """What the sources add to a build besides the spec folder (sources/, asked by session.py):
    specs made in memory, files for the package, and what they found wrong or worth saying."""

    specs: tuple[Contributed, ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # (path in the package, text)
    diagnostics: tuple[Diagnostic, ...] = ()


# -- parsed files and where schema nodes came from (toolspec/load.py and toolspec/bundle.py make these) ----------------------------------


@dataclass(frozen=True)
class Origin:
    """Nodes under `prefix` of a bundled schema come from `pointer` in `document`."""

    prefix: str
    document: Document
    pointer: str


@dataclass
class Located:
    """A schema tree and where its nodes came from.

    `moved` maps id() of nodes that transforms created to the pointer, in the bundled schema, of
    the node they stand for; any other node's place follows from its parent's.
    """

    schema: dict[str, Any]
    origins: tuple[Origin, ...]  # longest prefix first
    moved: dict[int, str] = field(default_factory=dict)
    keep: list[Any] = field(default_factory=list)  # keeps moved nodes alive while ids are in use
    # the origins by prefix (the first of each), shared by every Located derived from this one:
    # a schema that inlines many definitions has as many origins, and each rule's finding asks
    _by_prefix: dict[str, Origin] | None = field(default=None, compare=False, repr=False)

    def source(self, pointer: str) -> tuple[Document, str]:
        """The document and pointer that a bundled-schema pointer stands for: the origin with
        the longest prefix that is the pointer or one of its parents."""
        by_prefix = self._index()
        prefix = pointer
        while True:
            origin = by_prefix.get(prefix)
            if origin is not None:
                return origin.document, origin.pointer + pointer[len(prefix) :]
            prefix, slash, _ = prefix.rpartition("/")
            if not slash:
                break
        first = self.origins[-1]
        return first.document, first.pointer + pointer

    def _index(self) -> dict[str, Origin]:
        if self._by_prefix is None:
            self._by_prefix = {}
            for each in self.origins:
                self._by_prefix.setdefault(each.prefix, each)
        return self._by_prefix

    def derive(self, schema: dict[str, Any]) -> Located:
        return Located(schema, self.origins, dict(self.moved), list(self.keep), self._index())

    def mark(self, node: Any, pointer: str) -> Any:
        """Record that a new node stands for the bundled node at pointer; returns the node."""
        if isinstance(node, (dict, list)):
            self.moved[id(node)] = pointer
            self.keep.append(node)
        return node


@dataclass(frozen=True)
class Positions:
    """1-based (line, col) of each value, and of each mapping key, by JSON pointer."""

    values: dict[str, tuple[int, int]] = field(default_factory=dict)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def value(self, pointer: str) -> tuple[int, int]:
        return self._nearest(self.values, pointer)

    def key(self, pointer: str) -> tuple[int, int]:
        if pointer in self.keys:
            return self.keys[pointer]
        return self.value(pointer)

    @staticmethod
    def _nearest(table: dict[str, tuple[int, int]], pointer: str) -> tuple[int, int]:
        while pointer:
            if pointer in table:
                return table[pointer]
            pointer = pointer.rpartition("/")[0]
        return table.get("", (1, 1))


@dataclass(frozen=True)
class Document:
    """One parsed file: its data and where each part of it came from."""

    path: Path  # absolute
    display: str  # as shown in diagnostics
    data: Any
    positions: Positions
    raw: bytes
