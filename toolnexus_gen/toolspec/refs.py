"""`$ref` handling: only references inside the spec folder are allowed, and nothing is fetched."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from toolnexus_gen.ir import Document
from toolnexus_gen.toolspec.load import Loader, LoadError, load_document
from toolnexus_gen.toolspec.pointer import place_pointer

if TYPE_CHECKING:
    import referencing


def document_uri(path: Path) -> str:
    return path.resolve().as_uri()


def _objects(schema: Any, pointer: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(place, object) for every object in schema, parents before children, keys in their order;
    a place is the walk's (parent's place, key), made a pointer only when one is wanted
    (place_pointer): most objects hold no $ref to report."""
    stack: list[tuple[Any, Any]] = [(pointer, schema)]
    while stack:
        place, value = stack.pop()
        if isinstance(value, dict):
            yield place, value
            stack.extend(((place, key), child) for key, child in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(
                ((place, index), child) for index, child in reversed(list(enumerate(value)))
            )


def iter_refs(schema: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer of the $ref keyword, its value) for every string $ref in schema."""
    for place, value in _objects(schema, pointer):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield f"{place_pointer(place)}/$ref", ref


def base_problems(schema: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """(pointer, why) for each `$id` naming a URL and each `$dynamicRef`/`$recursiveRef` that is
    not a fragment: a validator would resolve them outside the schema, and jsonschema's default
    would fetch the URL (or read the file) to do it. Nothing here ever fetches, so they are
    refused, not carried into the generated schemas (a gateway validates results against them)."""
    for place, value in _objects(schema, pointer):
        if "$id" not in value and "$dynamicRef" not in value and "$recursiveRef" not in value:
            continue
        here = place_pointer(place)
        base = value.get("$id")
        if isinstance(base, str) and (urlsplit(base).scheme or urlsplit(base).netloc):
            yield (
                f"{here}/$id",
                f"$id {base!r} is not local: references under it would resolve against that URL, "
                "and toolnexus-gen never fetches schemas; remove it",
            )
        for key in ("$dynamicRef", "$recursiveRef"):
            ref = value.get(key)
            if isinstance(ref, str) and not ref.startswith("#"):
                yield (
                    f"{here}/{key}",
                    f"{key} {ref!r} is not local: only a fragment (#...) within the schema "
                    "can be resolved",
                )


def ref_problem(ref: str, doc_path: Path, specs_dir: Path) -> str | None:
    """Why ref may not be used, or None when it stays inside the spec folder."""
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc:
        return f"$ref {ref!r} is not local: toolnexus-gen never fetches schemas; copy it under the spec folder"
    if not parts.path:
        return None
    target = (doc_path.parent / unquote(parts.path)).resolve()
    root = specs_dir.resolve()
    if not target.is_relative_to(root):
        return f"$ref {ref!r} leaves the spec folder {specs_dir.as_posix()!r}"
    if not target.is_file():
        return f"$ref {ref!r} points to a file that does not exist"
    return None


class SpecRegistry:
    """A `referencing` registry over the spec folder: loads sibling files on demand, never the
    network. Made on first use: a build that resolves nothing never imports `referencing`."""

    def __init__(self, specs_dir: Path) -> None:
        self.root = specs_dir.resolve()

    @cached_property
    def registry(self) -> referencing.Registry[Any]:
        import referencing
        import referencing.exceptions
        from referencing.jsonschema import DRAFT202012

        def retrieve(uri: str) -> referencing.Resource[Any]:
            path = Path(unquote(urlsplit(uri).path))
            if urlsplit(uri).scheme != "file" or not path.resolve().is_relative_to(self.root):
                # attrs makes `ref` its field; mypy does not see through referencing's wrapper
                raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]
            try:
                document = load_document(path)
            except LoadError as exc:
                raise referencing.exceptions.NoSuchResource(ref=uri) from exc  # type: ignore[call-arg]
            return DRAFT202012.create_resource(document.data)

        registry: referencing.Registry[Any] = referencing.Registry(retrieve=retrieve)  # type: ignore[call-arg]
        return registry

    def with_schema(self, document: Document, schema: Any) -> referencing.Registry[Any]:
        """The registry with a tool's own schema standing at its file's URI (its `#` is the schema root)."""
        from referencing.jsonschema import DRAFT202012

        registry: referencing.Registry[Any] = self.registry.with_resource(
            document_uri(document.path), DRAFT202012.create_resource(schema)
        )
        return registry


def ref_closure(
    schema: Any, doc_path: Path, specs_dir: Path, load: Loader | None = None
) -> list[tuple[str, str]]:
    """(path relative to the spec folder, SHA-256) of every file the schema's $refs reach,
    transitively: what a cached result about this schema depends on besides the schema itself."""
    from toolnexus_gen.memo import sha

    load = load or Loader()
    root = load.resolved(specs_dir)
    seen: dict[Path, str] = {}
    stack = _files_named(schema, doc_path, load)
    while stack:
        target = stack.pop()
        if target in seen or not target.is_relative_to(root) or not load.is_file(target):
            continue
        try:
            document = load(target)
        except LoadError:
            seen[target] = sha(target.read_bytes())  # unreadable: its bytes still count
            continue
        seen[target] = load.digest(target)
        named = load.named.get(target)
        if named is None:  # each shared file's refs read once per build
            named = load.named[target] = _files_named(document.data, target, load)
        stack.extend(named)
    return sorted((path.relative_to(root).as_posix(), digest) for path, digest in seen.items())


def _files_named(schema: Any, base: Path, load: Loader) -> list[Path]:
    """The files (resolved) that the schema's $refs name, in order."""
    found = []
    for _, ref in iter_refs(schema, ""):
        parts = urlsplit(ref)
        if not (parts.scheme or parts.netloc or not parts.path):
            found.append(load.resolved(base.parent / unquote(parts.path)))
    return found
