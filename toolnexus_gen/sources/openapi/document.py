"""Reading an OpenAPI document: the file at any size (an imported document is not a
hand-written spec: GitHub's is 13 MB), Swagger 2 told apart before anything else, and `$ref`s
followed into the document itself and into the files beside it (a multi-file layout such as
DigitalOcean's, with operations, parameters and schemas in their own files).

A `$ref` may name a file under the root document's folder (symbolic links resolved), never one
outside it, and never a URL: nothing is fetched. Positions (line and column) are found only
when a message needs one, so a 13 MB JSON document costs one `json.loads`.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.fs.numbers import finite_float, json_number_problem
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.ir import Document, Positions
from toolnexus_gen.toolspec.load import LoadError
from toolnexus_gen.toolspec.pointer import MISSING, join_pointer, resolve, unescape

MAX_DEPTH = 256  # nesting; Kubernetes' documents go deepest among the real ones
SWAGGER = re.compile(rb"""^\s*(?:\{\s*)?["']?swagger["']?\s*:\s*["']?(\d[\w.]*)""")


@dataclass(frozen=True)
class At:
    """A place in one of the document's files: where a message points, and what a $ref names."""

    doc: Document
    pointer: str

    def join(self, *tokens: str | int) -> At:
        pointer = self.pointer
        for token in tokens:
            pointer = join_pointer(pointer, token)
        return At(self.doc, pointer)

    @property
    def key(self) -> tuple[Path, str]:
        return (self.doc.path, self.pointer)

    def __str__(self) -> str:
        return f"{self.doc.display}#{self.pointer}"


class Skip(Exception):
    """This operation (or component) cannot be imported: why, and where."""

    def __init__(self, code: str, message: str, at: At, *, key: bool = False) -> None:
        super().__init__(message)
        self.code, self.message, self.at, self.on_key = code, message, at, key

    def diagnostic(self, severity: Severity = Severity.WARNING) -> Diagnostic:
        positions = self.at.doc.positions
        pointer = self.at.pointer
        line, col = positions.key(pointer) if self.on_key else positions.value(pointer)
        return Diagnostic(
            self.at.doc.display, line, col, self.code, self.message, severity, pointer or "/"
        )


class _LazyJsonPositions(Positions):
    """The positions of a JSON text, found when one is asked for: a walk along the pointer
    alone, skipping the values beside it at the C parser's speed (a 13 MB document would take
    a minute to map whole, for one warning)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self._decoder = json.JSONDecoder()
        self._lines: list[int] | None = None
        # offset of an object -> (its members found so far, where the scan resumes, the offset
        # of a value found but not yet passed over)
        self._objects: dict[int, tuple[dict[str, tuple[int, int]], int, int | None]] = {}

    def value(self, pointer: str) -> tuple[int, int]:
        return self._where(self._walk(pointer)[0])

    def key(self, pointer: str) -> tuple[int, int]:
        value_at, key_at = self._walk(pointer)
        return self._where(key_at if key_at is not None else value_at)

    def _where(self, offset: int) -> tuple[int, int]:
        if self._lines is None:
            self._lines = [0] + [m.end() for m in re.finditer("\n", self._text)]
        index = bisect.bisect_right(self._lines, offset) - 1
        return index + 1, offset - self._lines[index] + 1

    def _skip(self, i: int) -> int:
        text = self._text
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    def _member(self, start: int, token: str) -> tuple[int, int] | None:
        """(offset of the value, of its key) of the member `token` of the object at `start`.
        What a scan finds is kept, and the next scan resumes where it stopped: the warnings of
        many operations (all under /paths) cost one pass over the document, not one each."""
        text = self._text
        keys, i, pending = self._objects.get(start) or ({}, self._skip(start + 1), None)
        if token in keys:
            return keys[token]
        found = None
        while True:
            if pending is not None:  # the value found last: skipped only when passed over
                j = self._skip(self._decoder.raw_decode(text, pending)[1])
                i, pending = (self._skip(j + 1) if text[j] == "," else j), None
            if i >= len(text) or text[i] != '"':
                break
            key, j = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            j = self._skip(self._skip(j) + 1)  # past ':'
            keys.setdefault(key, (j, i))  # the first of two equal keys, as before
            pending = j
            if key == token:
                found = keys[key]
                break
        self._objects[start] = (keys, i, pending)
        return found

    def _walk(self, pointer: str) -> tuple[int, int | None]:
        """(offset of the value, of its key) at `pointer`, or of the nearest one above it."""
        text, i, key_at = self._text, self._skip(0), None
        for raw in pointer.split("/")[1:] if pointer else ():
            token, here, here_key = unescape(raw), i, key_at
            if text[i] == "{":
                found = self._member(i, token)
                if found is None:
                    return here, here_key
                i, key_at = found
            elif text[i] == "[" and token.isdigit():
                i, n = self._skip(i + 1), 0
                while i < len(text) and text[i] != "]" and n < int(token):
                    j = self._skip(self._decoder.raw_decode(text, i)[1])
                    i, n = (self._skip(j + 1) if text[j] == "," else j), n + 1
                if n < int(token) or text[i] == "]":
                    return here, here_key
                key_at = None
            else:
                return here, here_key
        return i, key_at


def load(path: Path, display: str | None = None) -> Document:
    """One file of the document, parsed; raises LoadError (located) when it cannot be read.
    A Swagger 2 document is told as such before it is parsed."""
    display = display or display_path(path)

    def fail(code: str, message: str, line: int = 1, col: int = 1) -> LoadError:
        return LoadError(Diagnostic(display, line, col, code, message))

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise fail("TN102", f"cannot read file: {exc.strerror or exc}") from None
    swagger = SWAGGER.match(raw[:4096].lstrip(b"\xef\xbb\xbf"))
    if swagger:
        raise fail("TN470", swagger_message(swagger.group(1).decode("ascii", "replace")))
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw:
        raise fail("TN102", "file is not UTF-8 text (UTF-16 or binary)")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise fail("TN102", f"file is not valid UTF-8 (byte offset {exc.start})") from None
    if not text.strip():
        raise fail("TN103", "file is empty")
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text, parse_constant=_no_constant, parse_float=finite_float)
        except json.JSONDecodeError as exc:
            raise fail("TN101", f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except ValueError as exc:
            number = json_number_problem(text, exc)
            if number is not None:
                raise fail("TN101", *number) from None
            raise fail("TN101", f"invalid JSON: {exc}") from None
        except RecursionError as exc:
            raise fail("TN101", f"invalid JSON: {exc}") from None
        positions: Positions = _LazyJsonPositions(text)
    else:
        from toolnexus_gen.toolspec.yaml_text import parse

        data, positions = parse(text, fail, True, MAX_DEPTH)
    if isinstance(data, dict) and "swagger" in data and "openapi" not in data:
        line, col = positions.key("/swagger")
        raise fail("TN470", swagger_message(str(data["swagger"])), line, col)
    return Document(path, display, data, positions, b"")


def swagger_message(version: str) -> str:
    return (
        f"this is a Swagger {version} document, not OpenAPI 3: convert it first (for example "
        "`npx swagger2openapi doc.json -o openapi.json`), then import the result"
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class Files:
    """The root document and the files its $refs reach, each read once."""

    def __init__(self, root: Document) -> None:
        self.root = root
        self.folder = root.path.resolve().parent
        self._docs: dict[Path, Document | LoadError] = {root.path.resolve(): root}

    def follow(self, ref: Any, at: At) -> tuple[Any, At]:
        """What a $ref (held by the object at `at`) names, and where that is; raises Skip."""
        if not isinstance(ref, str):
            raise Skip("TN451", "$ref must be a string", at.join("$ref"))
        parts = urlsplit(ref)
        if parts.scheme or parts.netloc:
            raise Skip(
                "TN451",
                f"$ref {ref!r} is a URL: nothing is fetched; save that file beside the document "
                "and refer to it by its path",
                at.join("$ref"),
            )
        doc = at.doc
        if parts.path:
            target = (at.doc.path.parent / unquote(parts.path)).resolve()
            if not target.is_relative_to(self.folder):
                raise Skip(
                    "TN451",
                    f"$ref {ref!r} leaves the document's folder ({display_path(self.folder)}): "
                    "only files beside the document or under its folder are read",
                    at.join("$ref"),
                )
            doc = self._load(target, ref, at)
        pointer = unquote(parts.fragment)
        if pointer and not pointer.startswith("/"):
            raise Skip(
                "TN451",
                f"$ref {ref!r}: only JSON pointer fragments (#/...) are followed",
                at.join("$ref"),
            )
        found = resolve(doc.data, pointer)
        if found is MISSING:
            where = "this document" if doc is at.doc else doc.display
            raise Skip("TN451", f"$ref {ref!r} points to nothing in {where}", at.join("$ref"))
        return found, At(doc, pointer)

    def deref(self, node: Any, at: At) -> tuple[Any, At]:
        """A Reference Object followed to what it names (chains too)."""
        seen: set[tuple[Path, str]] = set()
        while isinstance(node, dict) and "$ref" in node:
            if at.key in seen:
                raise Skip("TN451", "these $refs point to each other without end", at)
            seen.add(at.key)
            node, at = self.follow(node["$ref"], at)
        return node, at

    def _load(self, path: Path, ref: str, at: At) -> Document:
        if not path.is_file():
            raise Skip("TN451", f"$ref {ref!r} names a file that does not exist", at.join("$ref"))
        if path not in self._docs:
            try:
                self._docs[path] = load(path)
            except LoadError as exc:
                self._docs[path] = exc
        found = self._docs[path]
        if isinstance(found, LoadError):
            d = found.diagnostic
            raise Skip("TN451", f"$ref {ref!r}: {d.path}:{d.line}:{d.col}: {d.message}", at)
        return found
