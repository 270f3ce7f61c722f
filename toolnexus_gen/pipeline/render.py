"""Stage 3: units become a FileMap {relative path: text}, models apart. Pure: no disk access.

Each provider file is its target's wrapper around the entries the units carry, spliced in as
they were encoded (so the entries of reused units are never encoded again); the package's Python
comes from templates (or, unchanged, from the last build), and each model from the memo or
datamodel-code-generator.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import attrgetter, contains, itemgetter
from typing import Any

from toolnexus_gen.codegen.models import Models
from toolnexus_gen.codegen.package import PACKAGE_FILES, model_header, render_package
from toolnexus_gen.config.many import Many
from toolnexus_gen.config.options import Header
from toolnexus_gen.ir import ModelJob, ToolSet, Unit, entry_text
from toolnexus_gen.memo import Memo
from toolnexus_gen.pipeline.toolsets import extras
from toolnexus_gen.pipeline.units import files_of
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.base import (
    Assembled,
    assemble_parts,
    dump_json,
    encode_entry,
    entry_depth,
    reassemble,
    with_strict,
)

FileMap = dict[str, str]
GITIGNORE = "# Written by toolnexus-gen.\n.toolnexus-gen.lock\n.toolnexus-gen.cache/\n"


@dataclass
class Rendered:
    files: FileMap
    # file -> unit rel -> (start, end) of its entry: what lets the next build reuse it
    layout: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    # each provider file as assembled: what the next build in this process splices into
    assembled: dict[str, Assembled] = field(default_factory=dict)


def _nothing(entries: list[Any]) -> list[Any]:
    return []


def _beside(document: Callable[[list[Any]], Any], added: list[Any]) -> Callable[[list[Any]], Any]:
    return lambda entries: [*document(entries), *added]


def render(
    toolset: ToolSet,
    units: Sequence[Unit],
    header: Header,
    reused: dict[str, str] | None = None,
    many: Many | None = None,
    assembled: dict[str, Assembled] | None = None,
    *,
    release: bool = False,
    spill: Callable[[str, Iterable[str]], str] | None = None,
) -> Rendered:
    """Every file but the models (render_models). `units` in name order, one per tool of
    toolset; `reused` holds the last build's package files that are still what render_package
    would write (the others are rendered); `assembled`: the provider files as the last build in
    this process assembled them (Rendered.assembled), whose unchanged entries stay in place.
    `release`: no later build in this process will reuse the units (a command line's build), so
    each provider file's entries are let go from the units once the file is assembled, and the
    file is not kept as assembled: the entries and the files they make are never all held at
    once (at 10,000 tools they are hundreds of megabytes each). `spill(file, parts)`: with
    `release`, each provider file is handed over part by part as it is assembled (each entry
    unpacked only when written), and what it gives stands for the text in the files
    (fs.output.Staging.spill: written ahead, so no provider file is held whole)."""
    rendered = Rendered({})
    many = many or Many()
    assembled = assembled or {}
    # a thousand units in each of seven files: these passes are map()s, run in C
    entries = [unit.entries for unit in units]
    for file, document in files_of(toolset.targets).items():
        has = list(map(contains, entries, repeat(file)))
        carried = list(compress(units, has))  # in name order
        if (
            release
            and spill is not None
            and _streamed(file, carried, toolset, many, rendered, spill)
        ):
            for held in compress(entries, has):
                del held[file]
            continue
        encoded = list(map(entry_text, map(itemgetter(file), compress(entries, has))))
        target = next((name for name in toolset.targets if TARGETS[name].file == file), None)
        depth = entry_depth(document)
        if target is not None and TARGETS[target].strict_limits is not None:
            encoded = _strictness(target, carried, encoded, depth, toolset)
        # where each entry stands, as written (strict true/false differ in length)
        spots = None
        infos = [info for info in map(attrgetter("info"), carried) if info is not None]
        if (
            target is not None
            and TARGETS[target].namespace_entry is not None
            and any(info.namespace is not None for info in infos)
        ):
            encoded, spots = _namespaced(target, carried, encoded, depth)
        if target is not None:  # after its tools: its tool search tool, hosted tools
            added = extras(target, infos, many)
            if target == "gemini":  # built-in tools stand beside the functionDeclarations wrapper
                # (no wrapper without declarations: Gemini rejects it)
                document = _beside(document if encoded else _nothing, added)
            else:
                encoded += [encode_entry(entry, depth) for entry in added]
        made = reassemble(document, encoded, assembled.get(file))
        places = made.places
        if release:
            for held in compress(entries, has):
                del held[file]
        else:
            rendered.assembled[file] = made
        text = made.text
        del made, encoded  # a released file's text is held by `text` alone, then spilled
        rendered.files[file] = text if spill is None or not release else spill(file, [text])
        del text
        if spots is None:  # each unit's entry is the file's entry of the same index
            rels = list(map(attrgetter("rel"), carried))
            rendered.layout[file] = dict(zip(rels, places[: len(rels)], strict=True))
        else:
            rendered.layout[file] = {
                unit.rel: (places[outer][0] + offset, places[outer][0] + offset + length)
                for unit, (outer, offset, length) in zip(carried, spots, strict=True)
            }
    aliases = alias_file(toolset)
    if aliases is not None:
        rendered.files[ALIASES_FILE] = aliases
    # The build's lock file and cache stay in the folder; keep them out of version control.
    rendered.files[".gitignore"] = GITIGNORE
    reused = reused or {}
    missing = [name for name in PACKAGE_FILES if name not in reused]
    rendered.files.update(reused)
    fresh = {unit.info.name for unit in units if unit.model_job is not None and unit.info}
    rendered.files.update(render_package(toolset, header, missing, fresh))
    return rendered


def _streamed(
    file: str,
    carried: list[Unit],
    toolset: ToolSet,
    many: Many,
    rendered: Rendered,
    spill: Callable[[str, Iterable[str]], str],
) -> bool:
    """`file` assembled as render does, each entry unpacked only as `spill` writes it; False
    (nothing done) for a file whose entries are grouped into namespaces (assembled whole)."""
    document = files_of(toolset.targets)[file]
    target = next((name for name in toolset.targets if TARGETS[name].file == file), None)
    depth = entry_depth(document)
    infos = [info for info in map(attrgetter("info"), carried) if info is not None]
    if target is not None and TARGETS[target].namespace_entry is not None:
        if any(info.namespace is not None for info in infos):
            return False
    texts: Iterable[str] = (entry_text(unit.entries[file]) for unit in carried)
    if target is not None and TARGETS[target].strict_limits is not None:
        relaxed = frozenset(dict(toolset.relaxed).get(target, ()))
        texts = (
            text
            if unit.info is None or unit.info.strict_cost(target) is None
            else with_strict(text, depth, unit.info.name not in relaxed)
            for unit, text in zip(carried, texts, strict=True)
        )
    if target is not None:  # after its tools: its tool search tool, hosted tools
        added = extras(target, infos, many)
        if target == "gemini":  # built-in tools stand beside the functionDeclarations wrapper
            document = _beside(document if carried else _nothing, added)
        else:
            texts = chain(texts, (encode_entry(entry, depth) for entry in added))
    places: list[tuple[int, int]] = []
    rendered.files[file] = spill(file, assemble_parts(dump_json(document([])), texts, places))
    rels = list(map(attrgetter("rel"), carried))
    rendered.layout[file] = dict(zip(rels, places[: len(rels)], strict=True))
    return True


def _strictness(
    target: str, units: Sequence[Unit], encoded: list[str], depth: int, toolset: ToolSet
) -> list[str]:
    """The entries with `strict` as the per-request limits decided (pipeline/strictness.py): a
    reused unit's entry is what the last build wrote, either way."""
    relaxed = frozenset(dict(toolset.relaxed).get(target, ()))
    return [
        text
        if unit.info is None or unit.info.strict_cost(target) is None
        else with_strict(text, depth, unit.info.name not in relaxed)
        for unit, text in zip(units, encoded, strict=True)
    ]


def _namespaced(
    target: str, units: Sequence[Unit], encoded: list[str], depth: int
) -> tuple[list[str], list[tuple[int, int, int]]]:
    """The file's entries with each namespace's tools inside its namespace tool, at the place of
    its first tool (units encode those entries two levels deeper: units.py), and where each
    unit's entry stands: (index among the entries, offset inside that entry, length)."""
    entry = TARGETS[target].namespace_entry
    assert entry is not None
    grouped: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        if unit.info is not None and unit.info.namespace is not None:
            grouped.setdefault(unit.info.namespace, []).append(i)
    outer: list[str] = []
    spots: list[tuple[int, int, int]] = [(0, 0, 0)] * len(units)
    for i, unit in enumerate(units):
        name = unit.info.namespace if unit.info is not None else None
        if name is None:
            spots[i] = (len(outer), 0, len(encoded[i]))
            outer.append(encoded[i])
            continue
        inner = grouped[name]
        if inner[0] != i:  # it stands in the namespace placed with the first of its tools
            continue
        members = [info for j in inner if (info := units[j].info) is not None]
        text, offsets = _wrap(entry(name, members), [encoded[j] for j in inner], depth)
        for j, offset in zip(inner, offsets, strict=True):
            spots[j] = (len(outer), offset, len(encoded[j]))
        outer.append(text)
    return outer, spots


def _wrap(wrapper: dict[str, Any], inner: list[str], depth: int) -> tuple[str, list[int]]:
    """A namespace tool (`tools` its last key, empty) holding the encoded entries, as
    encode_entry would write it whole; and the offset of each entry in it."""
    text = encode_entry(wrapper, depth)
    at = text.rindex("[]")
    head = text[:at] + "[\n"
    offsets, offset = [], len(head)
    for item in inner:
        offsets.append(offset)
        offset += len(item) + 2  # and the ",\n" after it
    body = ",\n".join(inner)
    return f"{head}{body}\n{'  ' * (depth + 1)}]{text[at + 2 :]}", offsets


ALIASES_FILE = "schemas/aliases.json"


def alias_file(toolset: ToolSet) -> str | None:
    """The maps the runtime reads to send calls back to the spec's names and meaning:
    {"tools": {target: {alias: name}}, "arguments": {target: {tool: MAP}}} of name_aliases, and
    strictify's {"nulls": {target: {tool: MAP}}}, MAP as targets/argmaps.py describes it (payload:
    the spec's property name; whether a null there means absent). A schema with recursive refs
    adds "argument_refs" / "null_refs": {target: {tool: {pointer: MAP}}}."""
    tables: dict[str, dict[str, dict[str, Any]]] = {
        key: {} for key in ("tools", "arguments", "nulls", "argument_refs", "null_refs")
    }
    for tool in toolset.tools:
        for target, alias in tool.aliases:
            tables["tools"].setdefault(target, {})[alias] = tool.name
        for kind, pairs in (("arguments", tool.argument_aliases), ("nulls", tool.null_maps)):
            for target, text in pairs:
                mapping, refs = json.loads(text)
                tables[kind].setdefault(target, {})[tool.name] = mapping
                if refs:
                    refs_kind = "argument_refs" if kind == "arguments" else "null_refs"
                    tables[refs_kind].setdefault(target, {})[tool.name] = refs
    if not any(tables.values()):
        return None
    body = {
        key: dict(sorted(table.items()))
        for key, table in tables.items()
        if table or key in ("tools", "arguments", "nulls")
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def model_maker(header: Header, memo: Memo) -> Models:
    """The build's models, from the memo or made on the workers as units ask for them."""

    # The header's text is kept in the memo (looked up now, so every build keeps it): a build
    # that makes a model or two then imports no Jinja.
    key = memo.key("model header", header.specs_rel, header.command)
    known = memo.model(key)

    def text() -> str:
        if known is not None:
            return known
        made = model_header(header)
        memo.store_model(key, made)
        return made

    return Models(memo, text)


def render_models(
    toolset: ToolSet,
    units: Sequence[Unit],
    models: Models,
    progress: Progress = unseen,
    made: Callable[[str, str], None] | None = None,
) -> FileMap:
    """Each tool's model module (the slow part: datamodel-code-generator, on the workers);
    `made(file, text)` hears of each as the workers make it (Models.sources)."""
    keys = [unit.model_key or "" for unit in units]
    jobs = [unit.model_job for unit in units]
    each: Callable[[ModelJob, str], None] | None = None
    if made is not None:
        tell = made

        def each(job: ModelJob, source: str) -> None:
            tell(f"models/{job.module}.py", source)

    sources = models.sources(keys, jobs, progress, each)
    return {  # each compiled when generated
        f"models/{tool.python.module}.py": source
        for tool, source in zip(toolset.tools, sources, strict=True)
    }
