"""OpenAPI documents as declared sources: `toolnexus-gen sync` re-imports each
`[tool.toolnexus-gen.openapi.<name>]` into `specs/<name>/`, as it snapshots an MCP server, and
`sync --check` says what the document (or an overlay) would change, by the rules of `breaking`.

One document's sync: read it (a path in the project, or an https URL fetched under the runtime's
rules: sources/fetch.py), apply its overlays in order (sources/overlay.py), keep the operations
the declaration selects (`operations`, `exclude`, `tags`), import what is left as `import
openapi` does (the same tool names, so overrides key on them), check every spec as the
project's build would take it (sources/carry.py), and compare with what the last sync wrote.

The folder's `.toolnexus-sync.json` lists the files a sync wrote there: only those are ever
replaced or removed, a file it did not write is left alone (one in the way of a new file is an
error), and it records what upstream removed (a tool, an argument) so that a build can say that
an override's target is gone upstream rather than unknown (pipeline/overrides.py).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_gen.config.curated import Declared
from toolnexus_gen.config.pyproject import Config
from toolnexus_gen.diagnostics import Diagnostic, DiagnosticsError, Severity
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.ir import Document
from toolnexus_gen.pipeline.overrides import MANIFEST, gone_record
from toolnexus_gen.sources.folder import FolderChanges
from toolnexus_gen.toolspec.load import LoadError

SUFFIX = ".json"


@dataclass
class DocumentSync(FolderChanges):
    """One declared document: the files its folder should hold, beside those a sync wrote."""

    declared: Declared
    folder: Path
    files: dict[str, str] = field(default_factory=dict)  # path in the folder -> text
    existing: dict[str, str] = field(default_factory=dict)  # written by the last sync
    tools: list[str] = field(default_factory=list)  # the specs' names
    gone: dict[str, str] = field(default_factory=dict)  # the manifest's record
    diagnostics: list[Diagnostic] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # variable -> what it holds
    failed: bool = False

    def manifest(self) -> str:
        data = {
            "source": {"openapi": self.declared.name},
            "document": self.declared.document,
            "files": sorted(self.files),
            "gone": dict(sorted(self.gone.items())),
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _error(declared: Declared, key: str, code: str, message: str) -> Diagnostic:
    line, col = declared.at(key)
    return Diagnostic(declared.display, line, col, code, f"openapi.{declared.name}: {message}")


def _inside(config: Config, declared: Declared, key: str, written: str) -> Path:
    """A path the declaration names, which must stay in the project (symbolic links resolved)."""
    path = config.root / written
    root = config.root.resolve()
    if not path.resolve().is_relative_to(root):
        raise DiagnosticsError(
            [
                _error(
                    declared,
                    key,
                    "TN482",
                    f"{written!r} is outside the project ({display_path(root)}): a document and "
                    "its overlays are files of the project",
                )
            ]
        )
    if not path.is_file():
        raise DiagnosticsError(
            [_error(declared, key, "TN481", f"{written!r}: no such file ({display_path(path)})")]
        )
    return path


def _load(path: Path, display: str | None = None) -> Document:
    from toolnexus_gen.sources.openapi.document import load

    try:
        return load(path, display)
    except LoadError as exc:
        raise DiagnosticsError([exc.diagnostic]) from None


def read_document(declared: Declared, config: Config, scratch: Path) -> Document:
    """The declared document, parsed (fetched first when it is a URL)."""
    if not declared.remote:
        return _load(_inside(config, declared, "document", declared.document))
    from toolnexus_gen.sources.fetch import FetchError, fetch

    try:
        body = fetch(declared.document)
    except FetchError as exc:
        raise DiagnosticsError([_error(declared, "document", "TN483", str(exc))]) from None
    stripped = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    path = scratch / ("document.json" if stripped.startswith((b"{", b"[")) else "document.yaml")
    path.write_bytes(body)
    return _load(path, declared.document)


def _select(declared: Declared, data: Any) -> list[Diagnostic]:
    """Keep the operations `operations` and `exclude` select (in place); warnings for an
    operationId the allowlist names that the document does not have."""
    from toolnexus_gen.sources.openapi import METHODS

    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, dict):
        return []
    seen: set[str] = set()
    for route in list(paths):
        item = paths[route]
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            op_id = operation.get("operationId")
            if isinstance(op_id, str):
                seen.add(op_id)
            keep = (declared.operations is None or op_id in declared.operations) and (
                op_id not in declared.exclude
            )
            if not keep:
                del item[method]
        if not any(method in item for method in METHODS):
            del paths[route]
    found = []
    for wanted in declared.operations or ():
        if wanted not in seen:
            found.append(
                Diagnostic(
                    declared.display,
                    *declared.at("operations"),
                    "TN487",
                    f"openapi.{declared.name}: operations names {wanted!r}, which the document "
                    "does not have (an operationId)",
                    Severity.WARNING,
                )
            )
    return found


def prepare(declared: Declared, config: Config, specs: Path) -> DocumentSync:
    """What a sync of one declared document would write; DiagnosticsError when the document
    or an overlay cannot be read, or nothing of it can be imported."""
    from toolnexus_gen.commands import importer
    from toolnexus_gen.sources import overlay
    from toolnexus_gen.sources.openapi import Reader
    from toolnexus_gen.sources.openapi.document import Files

    out = DocumentSync(declared, specs / declared.name)
    with tempfile.TemporaryDirectory(prefix="toolnexus-sync-") as scratch:
        document = read_document(declared, config, Path(scratch))
        overlays = [
            _load(_inside(config, declared, "overlays", written)) for written in declared.overlays
        ]
        applied = overlay.apply(document.data, overlays)
        out.diagnostics += applied.diagnostics
        if applied.failed:
            raise DiagnosticsError(out.diagnostics)
        out.diagnostics += _select(declared, applied.data)
        root = Document(
            document.path, document.display, applied.data, document.positions, document.raw
        )
        reader = Reader(Files(root), declared.server, frozenset(declared.tags), declared.env_prefix)
        imported = reader.read()
    if reader.problems:
        raise DiagnosticsError(out.diagnostics + reader.problems)
    out.diagnostics += imported.skipped
    out.diagnostics += imported.warnings  # what the import changed (a login moved out of a URL)
    importer.carry(imported, config, out.folder, SUFFIX)
    out.notes = list(imported.notes)
    out.env = dict(imported.env)
    for name in sorted(imported.specs):
        out.files[name + SUFFIX] = importer.file_text(imported, name, SUFFIX)
        out.tools.append(name)
    for stem, schema in sorted(imported.shared.items()):
        out.files[f"{imported.folder}/{stem}.json"] = importer.spec_text(schema, SUFFIX)
    _existing(out)
    return out


def _existing(out: DocumentSync) -> None:
    """The files the last sync wrote (its manifest), what is in the way of the new ones, and
    the record of what upstream removed."""
    manifest = out.folder / MANIFEST
    written: list[str] = []
    gone: dict[str, str] = {}
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text("utf-8"))
        except (OSError, ValueError, RecursionError):
            data = {}
        if isinstance(data, dict):
            listed = data.get("files")
            written = [f for f in listed if _relative(f)] if isinstance(listed, list) else []
            recorded = data.get("gone")
            if isinstance(recorded, dict):
                gone = {k: v for k, v in recorded.items() if isinstance(v, str)}
    outside = [rel for rel in {*written, *out.files} if not _stays_in(out.folder, out.folder / rel)]
    if outside:
        raise DiagnosticsError(
            [
                _error(
                    out.declared,
                    "",
                    "TN488",
                    f"{display_path(out.folder / sorted(outside)[0])}: a symbolic link leads out "
                    f"of {display_path(out.folder)}; sync writes and removes files there only: "
                    "remove the link",
                )
            ]
        )
    for rel in written:
        path = out.folder / rel
        if path.is_file() and not path.is_symlink():
            out.existing[rel] = path.read_text("utf-8", "replace")
    in_the_way = [
        rel for rel in out.files if rel not in out.existing and (out.folder / rel).exists()
    ]
    if in_the_way:
        shown = ", ".join(display_path(out.folder / rel) for rel in in_the_way[:5])
        raise DiagnosticsError(
            [
                _error(
                    out.declared,
                    "",
                    "TN488",
                    f"{shown} {'is' if len(in_the_way) == 1 else 'are'} in the way: sync did not "
                    f"write {'it' if len(in_the_way) == 1 else 'them'} and never replaces a file "
                    "of yours; move it, or sync the document into another folder (its name)",
                )
            ]
        )
    out.gone = _gone(out, gone)


def _stays_in(folder: Path, path: Path) -> bool:
    """Whether `path` (its folder's links resolved) is in `folder`, itself in the spec folder's
    parent: no link in between leads a write or a removal elsewhere."""
    base = folder.parent.resolve()
    return (
        folder.resolve().is_relative_to(base)
        and path.parent.resolve().is_relative_to(folder.resolve())
        and not path.is_symlink()
    )


def _relative(rel: Any) -> bool:
    """A manifest's entry: a plain path inside the folder (a hand-edited one cannot point out)."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel:
        return False
    parts = rel.split("/")
    return not rel.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def _gone(out: DocumentSync, before: dict[str, str]) -> dict[str, str]:
    """The record of what upstream removed (pipeline/overrides.py keeps its form)."""
    specs = {rel: text for rel, text in out.existing.items() if "/" not in rel}
    now = {rel: text for rel, text in out.files.items() if "/" not in rel}
    return gone_record(before, specs, now, f"`sync` of openapi.{out.declared.name}")


# -- where the calls go: a document that moves its tools to another server -----------------------


def origin_problems(out: DocumentSync, accept: bool) -> list[Diagnostic]:
    """What a sync would change of where its tools' calls go: a tool whose server (scheme, host
    and port of its base URL) changes is an error unless `accept` is given or the declaration
    pins its `server` (a document, or whoever edits it upstream, would otherwise send every
    call, with the secrets its headers carry, elsewhere); an argument that moves from a header
    into the query (where logs keep it) is a warning."""
    found = []
    for rel in sorted(out.files.keys() & out.existing.keys()):
        if "/" in rel:
            continue
        old_spec, new_spec = _spec_of(out.existing[rel]), _spec_of(out.files[rel])
        old, new = _http_of(old_spec), _http_of(new_spec)
        if old is None or new is None:
            continue
        tool = rel.removesuffix(SUFFIX)
        before, after = _origin(old), _origin(new)
        if before != after and out.declared.server is None and not accept:
            found.append(
                _error(
                    out.declared,
                    "document",
                    "TN378",
                    f"tool {tool!r} would now send its calls to {after or 'no server'} instead "
                    f"of {before or 'no server'}: nothing is written; if the document's new "
                    "server is meant, run `toolnexus-gen sync --accept-origin`, or pin one with "
                    "server = ...",
                )
            )
        moved = sorted(_header_arguments(old) & _query_arguments(new, new_spec))
        for arg in moved:
            line, col = out.declared.at("document")
            found.append(
                Diagnostic(
                    out.declared.display,
                    line,
                    col,
                    "TN379",
                    f"openapi.{out.declared.name}: tool {tool!r} now sends argument {arg!r} in "
                    "the query instead of a header (a URL's query reaches logs and proxies)",
                    Severity.WARNING,
                )
            )
    return found


def _spec_of(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _http_of(spec: Any) -> dict[str, Any] | None:
    http = spec.get("http") if isinstance(spec, dict) else None
    return http if isinstance(http, dict) else None


def _origin(http: dict[str, Any]) -> str | None:
    """scheme://host[:port] of a binding's base URL (or of its URL when that is absolute)."""
    from urllib.parse import urlsplit

    url = http.get("base_url")
    if not isinstance(url, str):
        url = http.get("url")
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    if not parts.scheme or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def _placeholders(text: Any) -> set[str]:
    import re

    return set(re.findall(r"(?<!\$)\{([^{}]+)\}", text)) if isinstance(text, str) else set()


def _header_arguments(http: dict[str, Any]) -> set[str]:
    headers = http.get("headers")
    if not isinstance(headers, dict):
        return set()
    return {name for value in headers.values() for name in _placeholders(value)}


def _query_arguments(http: dict[str, Any], spec: Any) -> set[str]:
    """The arguments a binding sends in the query (as the runtime's HTTP executor does): those
    `query` lists, and every other one not in the path or a header when there is no body (or
    the body is one argument's value)."""
    query = http.get("query")
    found = {q for q in query if isinstance(q, str)} if isinstance(query, list) else set()
    schema = spec.get("input_schema") if isinstance(spec, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    body_arg = http.get("body_arg")
    if isinstance(properties, dict) and (http.get("body", "none") == "none" or body_arg):
        elsewhere = _placeholders(http.get("url")) | _header_arguments(http) | {body_arg}
        found |= {name for name in properties if name not in elsewhere}
    return found


# -- drift: what a sync would change, by the rules of `breaking` ----------------------------------


def tool_of(rel: str) -> str | None:
    """The tool a file of the folder is the spec of (None: a shared schema)."""
    return None if "/" in rel else rel.removesuffix(SUFFIX)


def consequences(out: DocumentSync, rel: str) -> list[str]:
    """What one spec's change means for its callers, by the rules of `toolnexus-gen breaking`
    (`error[TN503] callers: required argument 'x' added: ...`), with the shared schemas it
    reaches read in (as they were, as they would be)."""
    from toolnexus_gen.breaking.rules import spec_findings

    old = _inlined(out.existing, rel)
    new = _inlined(out.files, rel)
    try:
        found = spec_findings(old, new, "the snapshot")
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        return [f"not compared by the rules of `breaking`: {type(exc).__name__}"]
    return [f"{f.severity}[{f.rule}] {f.category}: {f.message}" for f in found]


def reaching(out: DocumentSync, shared: str) -> list[str]:
    """The tools whose spec reaches a shared schema, directly or through others (as they are
    now, and as they would be)."""
    import re

    found = set()
    for files in (out.existing, out.files):
        refs = {
            rel: {
                name
                for ref in re.findall(r'"\$ref": "([^"#]+)', text)
                if (name := _join(rel.rpartition("/")[0], ref)) is not None
            }
            for rel, text in files.items()
        }
        for rel in files:
            if "/" in rel:
                continue
            seen, stack = set(), list(refs[rel])
            while stack:
                name = stack.pop()
                if name not in seen:
                    seen.add(name)
                    stack.extend(refs.get(name, ()))
            if shared in seen:
                found.add(rel.removesuffix(SUFFIX))
    return sorted(found)


MAX_INLINE = 2000  # references followed while reading one spec in for the comparison


def _inlined(files: dict[str, str], rel: str) -> Any:
    """A spec with its references to the shared schemas replaced by what they name (a
    reference that loops, or past MAX_INLINE of them, is left as it is)."""
    text = files.get(rel)
    if text is None:
        return None
    try:
        spec = json.loads(text)
    except (ValueError, RecursionError):
        return None
    cache: dict[str, Any] = {}
    budget = [MAX_INLINE]

    def shared(name: str) -> Any:
        if name not in cache:
            try:
                cache[name] = json.loads(files[name]) if name in files else None
            except (ValueError, RecursionError):
                cache[name] = None
        return cache[name]

    def walk(node: Any, base: str, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, base, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#") and budget[0] > 0:
            file, _, fragment = ref.partition("#")
            name = _join(base, file)
            target = shared(name) if name is not None and name not in seen else None
            if name is not None and target is not None and not fragment:
                budget[0] -= 1
                rest = {k: v for k, v in node.items() if k != "$ref"}
                inner = walk(target, name.rpartition("/")[0], (*seen, name))
                return {**inner, **rest} if isinstance(inner, dict) else inner
        return {key: walk(value, base, seen) for key, value in node.items()}

    return walk(spec, "", ())


def _join(base: str, file: str) -> str | None:
    parts = [p for p in base.split("/") if p]
    for part in file.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)
