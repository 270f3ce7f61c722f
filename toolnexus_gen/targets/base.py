"""What every provider target shares: its name rule, the empty-arguments schema, JSON output."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Located, Tool, ToolInfo
from toolnexus_gen.targets.reading import Imported
from toolnexus_gen.targets.transforms import apply

# A tool without arguments, for providers that want a schema anyway: accepted by OpenAI (which
# rejects an object without "properties"), Anthropic, MCP and Bedrock alike.
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def input_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The schema to emit: the target's effective schema, or the no-arguments object."""
    return schema if schema is not None else dict(EMPTY_OBJECT)


def effective(
    tool: Tool, options: dict[str, Any], *, must_inline: bool = False, output: bool = False
) -> Located | None:
    """The tool's input (or output) schema as this target will emit it: inlined and transformed
    as configured. Raises Cycle when must_inline and the schema is recursive.
    """
    located = tool.output_located if output else tool.located
    if located is None:
        return None
    return apply(located, tuple(options.get("transforms", ())), must_inline=must_inline)


def dump_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# A provider file is its target's document(entries): a wrapper around one entry per tool. Entries
# are encoded one by one (so a later build can reuse those of unchanged tools) and spliced into
# the wrapper; the result is byte for byte dump_json(document(entries)).


def _list_line(skeleton: str) -> tuple[int, str]:
    """Where the (empty) tool list stands in a wrapper, and the indent of its line."""
    at = skeleton.index("[]")  # the wrapper holds no other list: its only values are names
    line = skeleton[skeleton.rfind("\n", 0, at) + 1 : at]
    return at, " " * (len(line) - len(line.lstrip(" ")))


def entry_depth(document: Callable[[list[Any]], Any]) -> int:
    """How many levels deep a target's entries sit in its file."""
    return len(_list_line(dump_json(document([])))[1]) // 2 + 1


def encode_entry(entry: Any, depth: int) -> str:
    """One entry as dump_json writes it inside the file (JSON strings never hold a newline)."""
    return _padded(json.dumps(entry, indent=2, ensure_ascii=False), depth)


def _padded(text: str, depth: int) -> str:
    pad = "  " * depth
    return pad + text.replace("\n", "\n" + pad)


def encode_entries(entries: dict[str, Any], depths: dict[str, int]) -> dict[str, str]:
    """`{file: encode_entry(entry, depths[file])}`, byte for byte (tested), with each object or
    list that several entries hold (one tool's schema, in most of its targets' files) encoded
    once: indented JSON is encoded in Python, not C, and was most of what a spec costs."""
    shared = _shared_nodes(list(entries.values()))
    if not shared:
        return {file: encode_entry(entry, depths[file]) for file, entry in entries.items()}
    texts: dict[int, str] = {}
    encoded = {}
    for file, entry in entries.items():
        encoded[file] = _padded(_encode_sharing(entry, shared, texts), depths[file])
    return encoded


# A schema sits at most this deep in an entry (bedrock: toolSpec.inputSchema.json).
_SHARED_DEPTH = 3


def _shared_nodes(entries: list[Any]) -> set[int]:
    """The ids of the objects and lists more than one entry holds (or one holds twice), looked
    for in each entry's first levels only (deeper, the walk would cost what it saves)."""
    seen: set[int] = set()
    shared: set[int] = set()

    def walk(node: Any, depth: int) -> None:
        if not isinstance(node, (dict, list)):
            return
        if id(node) in seen:
            shared.add(id(node))
            return  # whatever it holds is shared with it
        seen.add(id(node))
        if depth < _SHARED_DEPTH:
            for child in node.values() if isinstance(node, dict) else node:
                walk(child, depth + 1)

    for entry in entries:
        walk(entry, 0)
    return shared


def _encode_sharing(entry: Any, shared: set[int], texts: dict[int, str]) -> str:
    """json.dumps(entry, indent=2), with the shared nodes' text encoded once (in `texts`): the
    entry is encoded with a unique marker string in place of each, then each marker is replaced
    by that text indented as its line. Any doubt (a marker's text found twice) falls back to
    encoding it whole."""
    found: dict[str, Any] = {}

    def swap(node: Any, depth: int) -> Any:
        if not isinstance(node, (dict, list)) or depth > _SHARED_DEPTH:
            return node
        if id(node) in shared and node:
            marker = f"\x00toolnexus-shared-{len(found)}\x00"
            found[marker] = node
            return marker
        if isinstance(node, dict):
            return {key: swap(value, depth + 1) for key, value in node.items()}
        return [swap(value, depth + 1) for value in node]

    outline = json.dumps(swap(entry, 0), indent=2, ensure_ascii=False)
    places = []
    for marker, node in found.items():
        quoted = json.dumps(marker)
        at = outline.find(quoted)
        if at < 0 or outline.find(quoted, at + 1) >= 0:
            return json.dumps(entry, indent=2, ensure_ascii=False)
        places.append((at, len(quoted), node))
    parts, last = [], 0
    for at, length, node in sorted(places, key=lambda place: place[0]):
        text = texts.get(id(node))
        if text is None:
            text = texts[id(node)] = json.dumps(node, indent=2, ensure_ascii=False)
        line = outline[outline.rfind("\n", 0, at) + 1 : at]
        indent = line[: len(line) - len(line.lstrip(" "))]
        parts += [outline[last:at], text.replace("\n", "\n" + indent)]
        last = at + length
    parts.append(outline[last:])
    return "".join(parts)


def with_strict(encoded: str, depth: int, strict: bool) -> str:
    """An encoded entry (encode_entry at `depth`) with its top-level `strict` set as asked.
    Only a key of the entry itself stands at the start of a line with exactly one more level of
    indent (JSON strings never hold a newline), so nothing inside its schema is touched."""
    key = "\n" + "  " * (depth + 1) + '"strict": '
    old, new = ("true", "false") if not strict else ("false", "true")
    return encoded.replace(key + old, key + new, 1)


def assemble(
    document: Callable[[list[Any]], Any], entries: list[str]
) -> tuple[str, list[tuple[int, int]]]:
    """The file holding the encoded entries, and where (start, end) each one stands in it."""
    return _assemble(dump_json(document([])), entries)


@dataclass(frozen=True)
class Assembled:
    """A provider file as assembled, with what it was assembled from: the next build in the
    same process (build --watch) splices its few changed entries into it (reassemble)."""

    skeleton: str  # dump_json(document([]))
    entries: list[str]
    text: str
    places: list[tuple[int, int]]


def reassemble(
    document: Callable[[list[Any]], Any], entries: list[str], last: Assembled | None = None
) -> Assembled:
    """assemble(document, entries), made from `last` (the same file assembled before) when only
    a few entries differ: the text between entries is the skeleton's and the separators, so
    putting each changed entry in the place of the old one gives the same bytes (tested)."""
    skeleton = dump_json(document([]))
    if (
        last is None
        or not entries
        or last.skeleton != skeleton
        or len(last.entries) != len(entries)
    ):
        return Assembled(skeleton, entries, *_assemble(skeleton, entries))
    # compared in C: an unchanged entry is mostly the same object (a reused unit's)
    changed = list(compress(range(len(entries)), map(str.__ne__, last.entries, entries)))
    if not changed:
        return Assembled(skeleton, entries, last.text, last.places)
    if len(changed) * 8 > len(entries):  # a join of them all costs less than many splices
        return Assembled(skeleton, entries, *_assemble(skeleton, entries))
    parts, places, at, shift = [], list(last.places), 0, 0
    ends = [*changed[1:], len(entries)]
    for i, end_of_run in zip(changed, ends, strict=True):
        start, end = last.places[i]
        parts += [last.text[at:start], entries[i]]
        at = end
        places[i] = (start + shift, start + shift + len(entries[i]))
        shift += len(entries[i]) - (end - start)
        if shift:  # the entries up to the next changed one move by as much
            places[i + 1 : end_of_run] = [
                (before + shift, after + shift) for before, after in places[i + 1 : end_of_run]
            ]
    parts.append(last.text[at:])
    return Assembled(skeleton, entries, "".join(parts), places)


def assemble_parts(
    skeleton: str, entries: Iterable[str], places: list[tuple[int, int]]
) -> Iterator[str]:
    """The text _assemble(skeleton, entries) joins, part by part, taking each entry only when
    its part is asked for (a file of hundreds of megabytes is then never whole in memory); where
    each entry stands is appended to `places` as it is passed."""
    at, indent = _list_line(skeleton)
    head = skeleton[:at] + "[\n"
    offset, first = len(head), True
    for text in entries:
        yield head if first else ",\n"
        first = False
        places.append((offset, offset + len(text)))
        offset += len(text) + 2  # and the ",\n" after it
        yield text
    yield skeleton if first else f"\n{indent}]{skeleton[at + 2 :]}"


def _assemble(skeleton: str, entries: list[str]) -> tuple[str, list[tuple[int, int]]]:
    if not entries:
        return skeleton, []
    at, indent = _list_line(skeleton)
    head = skeleton[:at] + "[\n"
    places, offset = [], len(head)
    parts = [head]
    for text in entries:
        places.append((offset, offset + len(text)))
        offset += len(text) + 2  # and the ",\n" after it
        parts += [text, ",\n"]
    parts[-1] = f"\n{indent}]{skeleton[at + 2 :]}"
    return "".join(parts), places  # one join: a file of 100 MB is copied once, not twice


@dataclass(frozen=True)
class NameRule:
    pattern: str
    text: str  # the provider's own words
    severity: Severity = Severity.ERROR

    @property
    def max_length(self) -> int:
        found = re.search(r"\{\d+,(\d+)\}$", self.pattern)
        return int(found.group(1)) if found else 64

    def check(self, tool: Tool | ToolInfo, target: str, code: str) -> list[Diagnostic]:
        if re.fullmatch(self.pattern, tool.name):
            return []
        line, col = tool.place("name")
        return [
            Diagnostic(
                tool.display,
                line,
                col,
                code,
                f"tool name {tool.name!r} is not valid for target {target}: {self.text} "
                f"(pattern {self.pattern})",
                self.severity,
                target=target,
            )
        ]


@dataclass(frozen=True)
class Target:
    """One provider, as the generator knows it (its options and Python type: registry.INFO)."""

    name: str
    file: str  # the provider file in the output package, e.g. schemas/gemini.json
    document: Callable[[list[Any]], Any]  # the file's wrapper around the tools' entries
    entry: Callable[[Tool, dict[str, Any] | None, dict[str, Any]], Any]  # one tool's entry
    must_inline: Callable[[dict[str, Any]], bool]  # whether $refs must be inlined
    check: Callable[[Tool, Located | None, dict[str, Any]], list[Diagnostic]]  # per tool
    check_all: Callable[[list[ToolInfo], dict[str, Any]], list[Diagnostic]]  # the whole set
    read: Callable[[Any, Imported], None]  # `toolnexus-gen import`: provider JSON to specs
    name_rule: NameRule | None = None  # tool names it takes (name_aliases fixes the others)
    property_rule: NameRule | None = None  # property names it takes, where it restricts them
    # profile = "reach": the options of a second form of entry that carries more of JSON Schema,
    # for a tool the configured form cannot carry (None: the target has no other form)
    fallback: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None
    # its tool search tool's entry (tool_search mode -> entry), where deferred tools load
    # provider-side; elsewhere the loops offer a client-side search_tools tool
    search_tool: Callable[[str], dict[str, Any]] | None = None
    hosted: bool = False  # whether its requests carry provider-executed (hosted) tools
    # the most tools one request takes, and the rule saying so
    max_tools: tuple[int, str] | None = None
    # per-request limits on strict tools (tools, optional and union parameters across them),
    # and what one strict entry's schema counts against them (Anthropic)
    strict_limits: tuple[int, int, int] | None = None
    strict_cost: Callable[[Located], tuple[int, int]] | None = None
    # where deferred tools are grouped into namespace tools (OpenAI Responses): the namespace a
    # tool's entry goes in (None: it stands alone), and a namespace's entry, its `tools` empty
    namespace: Callable[[Tool], str | None] | None = None
    namespace_entry: Callable[[str, Sequence[ToolInfo]], dict[str, Any]] | None = None
    # what the provider answers a request whose tool list is empty (None: it takes one)
    empty_tools: str | None = None
    # check()'s findings one by one, in its order, where computing them all costs (describe
    # stops at its first fix that needs a check again); None: check() is used
    findings: Callable[[Tool, Located | None, dict[str, Any]], Iterable[Diagnostic]] | None = None
