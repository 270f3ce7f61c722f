"""Stage 2b: each tool's schema made self-contained, and inlined where a provider needs it.

`bundle` pulls every `$ref` into another file under the spec folder into the tool's own `$defs`
(the refs are rewritten to `#/$defs/<name>`), so each provider file and each model stands on its
own. Local refs stay as written. Nothing is fetched: only files inside the spec folder are read,
and `validate` has already refused anything else.

`inline` replaces every local `$ref` with a copy of its target, for Gemini `parameters` (which has
no references) and the opt-in `inline_refs` transform; a recursive schema cannot be inlined and
raises `Cycle` naming the loop.

Both keep a `Located` record of where each node came from, so that a diagnostic about the emitted
schema points at the line and column in the file the author wrote.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.ir import Document, Located, Origin, Tool
from toolnexus_gen.toolspec.load import Loader, LoadError
from toolnexus_gen.toolspec.pointer import escape, join_pointer, place_pointer, resolve, unescape

# Keywords whose value is a schema, a list of schemas, or a mapping of names to schemas.
ONE_SCHEMA = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})


def walk(located: Located) -> Iterator[tuple[str, dict[str, Any], tuple[str, ...]]]:
    """(bundled pointer, node, path of keywords from the root) for every schema node."""
    stack: list[tuple[Any, str, tuple[str, ...]]] = [(located.schema, "", ())]
    while stack:
        node, pointer, path = stack.pop()
        if not isinstance(node, dict):
            continue
        pointer = located.moved.get(id(node), pointer)
        yield pointer, node, path
        children = []
        for keyword in ONE_SCHEMA:
            if keyword in node:
                children.append((node[keyword], f"{pointer}/{keyword}", (*path, keyword)))
        for keyword in SCHEMA_LISTS:
            if isinstance(node.get(keyword), list):
                for i, child in enumerate(node[keyword]):
                    children.append((child, f"{pointer}/{keyword}/{i}", (*path, keyword)))
        for keyword in SCHEMA_MAPS:
            if isinstance(node.get(keyword), dict):
                for name, child in node[keyword].items():
                    children.append(
                        (child, join_pointer(f"{pointer}/{keyword}", name), (*path, keyword))
                    )
        stack.extend(reversed(children))


# -- bundling -----------------------------------------------------------------------------------


class _Bundler:
    def __init__(
        self, specs_dir: Path, document: Document, base: str, schema: Any, load: Loader
    ) -> None:
        self.load = load
        self.specs_dir = specs_dir.resolve()
        self.document = document
        self.base = base
        self.defs_key = (
            "definitions" if "definitions" in schema and "$defs" not in schema else "$defs"
        )
        self.taken = set(schema.get(self.defs_key, {}) or {})
        self.imported: dict[tuple[Path, str], str] = {}
        self.new_defs: dict[str, Any] = {}
        self.origins: list[Origin] = []
        # What adopting a shared definition did, kept for the build (on the Loader) so that the
        # next tool that reaches it takes the same definitions without rewriting them again:
        # every tool of an API reaches the same shared schemas. The log holds, in order, each
        # definition adopted (["new", key, name, base name, document, pointer, node]) and each
        # one named again (["use", key, name]); `_specific` counts refs whose answer depends on
        # the tool's own file, which are never kept.
        self.cache: dict[Any, tuple[list[Any], ...]] = load.bundled
        self._log: list[list[Any]] = []
        self._specific = 0

    def rewrite(self, node: Any, document: Document, base: str) -> Any:
        """A copy of node with refs that leave `document`'s schema rewritten into the root $defs."""
        if isinstance(node, list):
            items = [self.rewrite(item, document, base) for item in node]
            return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
        if not isinstance(node, dict):
            return node
        changed = {key: self.rewrite(value, document, base) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str):
            new_ref = self.ref(ref, document, base)
            if new_ref != ref:
                changed["$ref"] = new_ref
        if all(changed[key] is node[key] for key in node):
            return node
        return changed

    def ref(self, ref: str, document: Document, base: str) -> str:
        parts = urlsplit(ref)
        fragment = unquote(parts.fragment)
        if not parts.path:
            if document is self.document:
                return ref  # local to the tool's own schema: unchanged
            return self.adopt(document, base + fragment, document.path.stem)
        path = self.load.resolved(document.path.parent / unquote(parts.path))
        own = self.load.resolved(self.document.path)
        if path == own:
            self._specific += 1
        if path == own and (fragment == self.base or fragment.startswith(self.base + "/")):
            return "#" + fragment[len(self.base) :]  # back into the tool's own schema
        try:
            target = self.document if path == own else self.load(path)
        except LoadError:
            return ref  # stays unresolved: reported later
        return self.adopt(target, fragment, path.stem)

    def adopt(self, document: Document, pointer: str, stem: str) -> str:
        key = (self.load.resolved(document.path), pointer)
        if key in self.imported:
            self._log.append(["use", key, self.imported[key]])
        else:
            node = _resolve(document.data, pointer)
            if node is _MISSING:
                return f"{document.display}#{pointer}"  # stays unresolved: reported later
            kept = self.cache.get((self.defs_key, key)) if document is not self.document else None
            if kept is None or not self._replay(kept):
                self._adopt(document, pointer, stem, key, node)
        return f"#/{self.defs_key}/{escape(self.imported[key])}"

    def _adopt(
        self, document: Document, pointer: str, stem: str, key: tuple[Path, str], node: Any
    ) -> None:
        start, specific = len(self._log), self._specific
        name, base_name = self._name(pointer, stem), _base_name(pointer, stem)
        event: list[Any] = ["new", key, name, base_name, document, pointer, None]
        self._log.append(event)
        self.imported[key] = name
        base = _schema_base(document)
        self.origins.append(Origin(f"/{self.defs_key}/{escape(name)}", document, pointer))
        self.new_defs[name] = None  # reserve the name before recursing (cycles)
        self.new_defs[name] = event[6] = self.rewrite(node, document, base)
        if self._specific == specific and document is not self.document and name == base_name:
            self.cache[(self.defs_key, key)] = tuple(self._log[start:])

    def _replay(self, log: tuple[list[Any], ...]) -> bool:
        """Take what adopting a definition did for an earlier tool, when this tool would name
        every definition it reaches alike (else False, and nothing is changed)."""
        planned: dict[tuple[Path, str], list[Any]] = {}
        names: set[str] = set()
        for event in log:
            key, name = event[1], event[2]
            have = self.imported.get(key)
            if have is None and key in planned:
                have = planned[key][2]
            if have is not None:
                if have != name:
                    return False
            elif event[0] != "new" or name != event[3] or name in self.taken or name in names:
                return False
            else:
                planned[key] = event
                names.add(name)
        for key, (_, _, name, _, document, pointer, node) in planned.items():
            self.imported[key] = name
            self.taken.add(name)
            self.origins.append(Origin(f"/{self.defs_key}/{escape(name)}", document, pointer))
            self.new_defs[name] = node
        self._log.extend(log)
        return True

    def _name(self, pointer: str, stem: str) -> str:
        base = _base_name(pointer, stem)
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def _base_name(pointer: str, stem: str) -> str:
    """A definition's name in a tool's $defs before any other takes it."""
    last = pointer.rstrip("/").rpartition("/")[2] if pointer.strip("/") else stem.lstrip("_")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", unescape(unquote(last))) or "schema"


_MISSING = object()


def _resolve(data: Any, pointer: str) -> Any:
    return resolve(data, pointer, _MISSING)


def _schema_base(document: Document) -> str:
    """Where `#` points inside a referenced file: its input_schema for a tool spec, else its root."""
    data = document.data
    if (
        isinstance(data, dict)
        and isinstance(data.get("input_schema"), dict)
        and not document.path.name.startswith("_")
    ):
        return "/input_schema"
    return ""


def bundle(
    schema: dict[str, Any],
    document: Document,
    pointer: str,
    specs_dir: Path,
    load: Loader | None = None,
) -> tuple[Located, list[tuple[str, str]]]:
    """The schema with cross-file refs pulled into its own $defs, and its broken refs as
    (message, bundled pointer of the $ref)."""
    bundler = _Bundler(specs_dir, document, pointer, schema, load or Loader())
    rewritten = bundler.rewrite(schema, document, pointer)
    if bundler.new_defs:
        rewritten = dict(rewritten)
        rewritten[bundler.defs_key] = {**(schema.get(bundler.defs_key) or {}), **bundler.new_defs}
    origins = sorted(
        [*bundler.origins, Origin("", document, pointer)],
        key=lambda o: len(o.prefix),
        reverse=True,
    )
    return Located(rewritten, tuple(origins)), broken_refs(rewritten)


def broken_refs(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Refs that resolve to nothing, and loops of refs with no schema between them."""
    found = []
    for pointer, node in _ref_nodes(schema, ""):
        ref = node["$ref"]
        if not ref.startswith("#"):
            found.append((f"$ref {ref!r} cannot be resolved", f"{pointer}/$ref"))
        elif ref.startswith("#/") or ref == "#":
            target = unquote(ref[1:])
            if _resolve(schema, target) is _MISSING:
                found.append((f"$ref {ref!r} points to nothing in the schema", f"{pointer}/$ref"))
            else:
                loop = _pure_loop(schema, target)
                if loop:
                    steps = " -> ".join(f"#{p}" for p in loop)
                    found.append(
                        (f"$ref loop with no schema in between ({steps})", f"{pointer}/$ref")
                    )
    return found


def _ref_nodes(node: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, node) of each node with a `$ref`, in document order; a pointer is made only
    for those (a large schema's every node made a bundle's hot spot)."""
    stack: list[tuple[Any, Any]] = [(node, pointer)]
    while stack:
        node, place = stack.pop()
        children: list[tuple[Any, Any]] = []
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield _pointer(place), node
            children = [
                (value, (place, key))
                for key, value in node.items()
                if key not in ("enum", "const", "default", "examples")  # data, not schemas
                and isinstance(value, (dict, list))
            ]
        elif isinstance(node, list):
            children = [(value, (place, i)) for i, value in enumerate(node)]
        stack.extend(reversed(children))


_pointer = place_pointer  # a place: (the parent's place, key), down to a pointer


def _pure_loop(schema: dict[str, Any], start: str) -> list[str]:
    """The loop when following refs from start only ever reaches more bare refs."""
    seen = [start]
    node = _resolve(schema, start)
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        if set(node) - ANNOTATIONS - {"$ref"} or not node["$ref"].startswith("#"):
            return []
        target = unquote(node["$ref"][1:])
        if target in seen:
            return [*seen[seen.index(target) :], target]
        seen.append(target)
        node = _resolve(schema, target)
    return []


def bundle_tool(tool: Tool, specs_dir: Path, load: Loader) -> tuple[Tool, list[Diagnostic]]:
    """The tool with its input and output schemas bundled (the IR's schemas are replaced).

    `load` reads each shared file once, however many tools reach it."""
    problems = []
    located = output_located = None
    schema, output = tool.input_schema, tool.output_schema
    if schema is not None:
        located, broken = bundle(schema, tool.source, tool.schema_pointer, specs_dir, load)
        problems += [_broken(located, *item) for item in broken]
        if not broken:
            located = lift_root_ref(located)
        schema = located.schema
    if output is not None:
        output_located, broken = bundle(output, tool.source, "/output_schema", specs_dir, load)
        output = output_located.schema
        problems += [_broken(output_located, *item) for item in broken]
    for key, made in (("input_schema", located), ("output_schema", output_located)):
        count = 0 if made is None else sum(1 for _ in walk(made))
        if count > MAX_SCHEMA_NODES:
            line, col = tool.place(key)
            problems.append(
                Diagnostic(
                    tool.display,
                    line,
                    col,
                    "TN130",
                    f"{key} holds {count:,} schema nodes with the shared schemas its $refs "
                    f"reach (the limit is {MAX_SCHEMA_NODES:,}): no provider takes a tool "
                    "definition that large; reach fewer shared schemas from this tool",
                    pointer=f"/{key}",
                )
            )
    bundled = replace(
        tool,
        input_schema=schema,
        output_schema=output,
        located=located,
        output_located=output_located,
    )
    return bundled, problems


def lift_root_ref(located: Located) -> Located:
    """A root that is only a local `$ref` to an object schema (as zod writes them) becomes that
    object, its definitions kept beside it: every provider wants an object at the root, and the
    model a class of its own."""
    root = located.schema
    ref = root.get("$ref")
    if "type" in root or not isinstance(ref, str) or not ref.startswith("#/"):
        return located
    target = resolve(root, unquote(ref[1:]), None)
    if not isinstance(target, dict) or target.get("type") != "object" or "$ref" in target:
        return located
    rest = {k: v for k, v in root.items() if k != "$ref"}
    parts = unquote(ref[1:]).split("/")[1:]
    if len(parts) == 2 and parts[0] in ("$defs", "definitions"):
        # The lifted definition stays only while another $ref still points to it.
        others = {k: v for k, v in root.items() if k not in ("$ref", parts[0])}
        defs = {k: v for k, v in rest[parts[0]].items() if k != parts[1]}
        if has_refs([target, others, defs]):
            defs = rest[parts[0]]
        rest = {k: v for k, v in rest.items() if k != parts[0]} | ({parts[0]: defs} if defs else {})
    lifted = located.derive({**target, **rest})
    # The root's keywords now come from the target: diagnostics inside them point there.
    for key, value in target.items():
        lifted.mark(value, join_pointer(unquote(ref[1:]), key))
    return lifted


def _broken(located: Located, message: str, pointer: str) -> Diagnostic:
    document, source = located.source(pointer)
    line, col = document.positions.value(source)
    return Diagnostic(document.display, line, col, "TN120", message, pointer=source)


# -- inlining -----------------------------------------------------------------------------------


# How many schema nodes a tool's input or output schema may hold once bundled (its shared
# definitions with it): the work of every later stage grows with it (TN130 past it).
MAX_SCHEMA_NODES = 100_000
# How many schema nodes an inlined schema may hold: past it (a definition named twice at every
# level of a DAG doubles it per level) the inlined form is refused (TooLarge), never built.
INLINE_BUDGET = 20_000


class TooLarge(Exception):
    """A schema whose inlined form would hold more than `budget` nodes (`size`, counted before
    any copy is made); `pointer` is the bundled pointer of the $ref that adds the most."""

    def __init__(self, size: int, budget: int, pointer: str) -> None:
        super().__init__(f"{size} nodes once inlined (budget {budget})")
        self.size = size
        self.budget = budget
        self.pointer = pointer


class Cycle(Exception):
    """A recursive schema: `path` lists the refs of the loop, first one repeated at the end."""

    def __init__(self, path: list[str], pointer: str) -> None:
        super().__init__(" -> ".join(path))
        self.path = path
        self.pointer = pointer  # bundled pointer of the $ref that closes the loop


def inline(located: Located, *, keep_recursive: bool = False) -> Located:
    """Every local $ref replaced by its target (siblings that are annotations kept, theirs first).

    A recursive ref raises Cycle, or with keep_recursive stays a ref (and its $defs stay).
    Refs with sibling constraints are merged only when no keyword clashes (the same value on both
    sides is no clash); otherwise they stay.
    """
    result = located.derive(located.schema)
    root = located.schema
    kept_refs: set[str] = set()
    if not keep_recursive:  # found before any copy is made (what expand would meet first)
        cycle = first_cycle(located)
        if cycle is not None:
            raise cycle
    _check_size(root)

    def expand(node: Any, pointer: str, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(item, f"{pointer}/{i}", stack) for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        pointer = located.moved.get(id(node), pointer)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target_pointer = unquote(ref[1:])
            if target_pointer in stack:
                if keep_recursive:
                    kept_refs.add(target_pointer)
                    return node
                loop = [*stack[stack.index(target_pointer) :], target_pointer]
                raise Cycle([f"#{p}" for p in loop], f"{pointer}/$ref")
            target = _resolve(root, target_pointer)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not _followed(node, target):  # a clashing keyword: kept as a ref
                return {k: expand(v, f"{pointer}/{k}", stack) for k, v in node.items()}
            body = expand(target, target_pointer, (*stack, target_pointer))
            merged = {
                **body,
                **{k: expand(v, f"{pointer}/{k}", stack) for k, v in siblings.items()},
            }
            return result.mark(merged, target_pointer)
        out = {}
        for key, value in node.items():
            if key in ("$defs", "definitions") and pointer == "":
                continue
            out[key] = expand(value, f"{pointer}/{key}", stack)
        return result.mark(out, pointer)

    schema = expand(root, "", ())
    if kept_refs:
        for key in ("$defs", "definitions"):
            if key in root:
                schema[key] = root[key]
    result.schema = schema
    return result


def first_cycle(located: Located) -> Cycle | None:
    """The first loop of local $refs that inlining would meet (in the order it walks), found
    with each definition walked once: what `inline` would raise, without making the copy."""
    root = located.schema
    done: set[str] = set()

    def visit(node: Any, pointer: str, stack: tuple[str, ...]) -> Cycle | None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                found = visit(item, f"{pointer}/{i}", stack)
                if found is not None:
                    return found
            return None
        if not isinstance(node, dict):
            return None
        pointer = located.moved.get(id(node), pointer)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target = unquote(ref[1:])
            if target in stack:
                loop = [*stack[stack.index(target) :], target]
                return Cycle([f"#{p}" for p in loop], f"{pointer}/$ref")
            found = _resolve(root, target)
            if target not in done and _followed(node, found):
                cycle = visit(found, target, (*stack, target))
                if cycle is not None:
                    return cycle
                done.add(target)
        for key, value in node.items():
            if key in ("$defs", "definitions") and pointer == "" or key == "$ref":
                continue
            cycle = visit(value, f"{pointer}/{key}", stack)
            if cycle is not None:
                return cycle
        return None

    return visit(root, "", ())


def _followed(node: dict[str, Any], target: Any) -> bool:
    """Whether inlining replaces this $ref by its target: not when a sibling keyword clashes
    with the target's (the same value on both sides is no clash), nor when it names nothing."""
    return isinstance(target, dict) and not any(
        key in target and target[key] != value
        for key, value in node.items()
        if key != "$ref" and key not in ANNOTATIONS
    )


def inlined_size(root: dict[str, Any]) -> tuple[int, str]:
    """How many nodes the schema holds once every local $ref is inlined (a recursive ref counted
    as one), and the pointer of the $ref that adds the most; each definition counted once."""
    sizes: dict[str, int] = {}
    biggest: tuple[int, str] = (0, "")

    def size(node: Any, pointer: str, stack: tuple[str, ...]) -> int:
        nonlocal biggest
        if isinstance(node, list):
            return sum(size(item, f"{pointer}/{i}", stack) for i, item in enumerate(node))
        if not isinstance(node, dict):
            return 0
        total = 1
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target = unquote(ref[1:])
            if target not in stack:
                if target not in sizes:
                    sizes[target] = 0  # a ref back here while it is counted adds nothing
                    found = _resolve(root, target)
                    sizes[target] = (
                        size(found, target, (*stack, target)) if found is not _MISSING else 0
                    )
                if sizes[target] > biggest[0]:
                    biggest = (sizes[target], f"{pointer}/$ref")
                total += sizes[target]
        for key, value in node.items():
            if key in ("$defs", "definitions") and pointer == "" or key in _DATA or key == "$ref":
                continue
            total += size(value, f"{pointer}/{key}", stack)
        return total

    total = size(root, "", ("",))
    return total, biggest[1]


_DATA = ("enum", "const", "default", "examples")


def _check_size(root: dict[str, Any], budget: int | None = None) -> None:
    limit = INLINE_BUDGET if budget is None else budget
    total, pointer = inlined_size(root)
    if total > limit:
        raise TooLarge(total, limit, pointer)


def has_refs(schema: Any) -> bool:
    if isinstance(schema, dict):
        return "$ref" in schema or any(has_refs(v) for v in schema.values())
    if isinstance(schema, list):
        return any(has_refs(v) for v in schema)
    return False
