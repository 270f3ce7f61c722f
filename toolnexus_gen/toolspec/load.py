"""Stage 1: find spec files and parse them (JSON or YAML) into plain data plus source positions.

Positions are kept per JSON pointer so every later stage can say `path:line:col`. Parsing is
strict: NaN/Infinity, numbers JSON cannot carry (fs/numbers.py), duplicate keys, YAML tags
that construct objects, and alias bombs are refused.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.fs.numbers import finite_float, json_number_problem
from toolnexus_gen.fs.paths import display_path
from toolnexus_gen.ir import Document, Positions
from toolnexus_gen.toolspec.pointer import join_pointer

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 64


class LoadError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


class Loader:
    """load_document with one read and parse per file for the life of one build: a shared
    fragment is reached from every tool that refers to it."""

    def __init__(self) -> None:
        self._found: dict[Path, Document | LoadError] = {}
        self._resolved: dict[Path, Path] = {}
        self._files: dict[Path, bool] = {}
        self._digests: dict[Path, str] = {}
        self.bundled: dict[Any, Any] = {}  # shared definitions as bundled (toolspec/bundle.py)
        self.named: dict[Path, list[Path]] = {}  # the files a file's $refs name (refs.py)

    def resolved(self, path: Path) -> Path:
        """path.resolve(), once per path for the build: every tool's every `$ref` asks."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = path.resolve()
        return found

    def is_file(self, path: Path) -> bool:
        """Whether the (resolved) path is a file, asked of the disk once per build."""
        found = self._files.get(path)
        if found is None:
            found = self._files[path] = path.is_file()
        return found

    def digest(self, path: Path) -> str:
        """SHA-256 of the (resolved) file's bytes as read for this build (LoadError when
        unreadable)."""
        found = self._digests.get(path)
        if found is None:
            from toolnexus_gen.memo import sha

            found = self._digests[path] = sha(self(path).raw)
        return found

    def __call__(self, path: Path) -> Document:
        key = self.resolved(path)
        if key not in self._found:
            try:
                self._found[key] = load_document(key)
            except LoadError as exc:
                self._found[key] = exc
        found = self._found[key]
        if isinstance(found, LoadError):
            raise found
        return found


def load_document(path: Path, display: str | None = None, *, scalar_keys: bool = False) -> Document:
    """A parsed file. `scalar_keys` lets YAML mapping keys be numbers or booleans, taken as their
    text (`200:` is "200"), as documents such as OpenAPI's are written; spec files keep the
    stricter rule."""
    display = display or display_path(path)

    def fail(code: str, message: str, line: int = 1, col: int = 1) -> LoadError:
        return LoadError(Diagnostic(display, line, col, code, message))

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise fail(
                "TN102", f"file is {size} bytes; spec files are limited to {MAX_FILE_BYTES} bytes"
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise fail("TN102", f"cannot read file: {exc.strerror or exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise fail(
            "TN102", "file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8"
        )
    if b"\x00" in raw:
        raise fail("TN102", "file is binary (contains NUL bytes), not JSON or YAML text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(
            raw[: exc.start].decode("utf-8", "replace"),
            len(raw[: exc.start].decode("utf-8", "replace")),
        )
        raise fail(
            "TN102",
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            line,
            col,
        ) from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise fail("TN103", "file is empty; a spec needs at least a description")
    if path.suffix == ".json":
        data, positions = parse_json(text, fail)
    else:
        data, positions = _parse_yaml(text, fail, scalar_keys)
    return Document(path, display, data, positions, raw)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


# -- JSON ---------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str, fail: Any) -> tuple[Any, Positions]:
    """Strict JSON with the position of every key and value; `fail(code, message, line, col)`
    makes the exception raised for a problem (TN101 syntax, TN104 depth, TN105 duplicate key)."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise fail("TN101", f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except ValueError as exc:
        number = json_number_problem(text, exc)
        if number is not None:
            raise fail("TN101", *number) from None
        raise fail("TN101", f"invalid JSON: {exc}") from None
    except RecursionError:
        raise fail("TN104", f"document is nested too deeply (limit {MAX_DEPTH} levels)") from None
    _check_depth(data, fail)
    positions = Positions()
    _JsonPositions(text, positions, fail).scan()
    return data, positions


def _check_depth(data: Any, fail: Any) -> None:
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise fail("TN104", f"document is nested too deeply (limit {MAX_DEPTH} levels)")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


class _JsonPositions:
    """Walks text that json.loads already accepted, recording where each value and key starts.

    Also reports duplicate keys, which json.loads silently collapses.
    """

    def __init__(self, text: str, positions: Positions, fail: Any) -> None:
        self.text = text
        self.positions = positions
        self.fail = fail
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index] + 1

    def skip(self, i: int) -> int:
        return _WS.match(self.text, i).end()  # type: ignore[union-attr]

    def scan(self) -> None:
        self.value(self.skip(0), "")

    def value(self, i: int, pointer: str) -> int:
        self.positions.values[pointer] = self.where(i)
        ch = self.text[i]
        if ch == "{":
            i = self.skip(i + 1)
            seen: set[str] = set()
            if self.text[i] == "}":
                return i + 1
            while True:
                key_at = i
                key, i = json.decoder.scanstring(self.text, i + 1)  # type: ignore[attr-defined]
                child = join_pointer(pointer, key)
                if key in seen:
                    raise self.fail("TN105", f"duplicate key {key!r}", *self.where(key_at))
                seen.add(key)
                self.positions.keys[child] = self.where(key_at)
                i = self.skip(self.skip(i) + 1)  # past ':'
                i = self.skip(self.value(i, child))
                if self.text[i] == "}":
                    return i + 1
                i = self.skip(i + 1)  # past ','
        if ch == "[":
            i = self.skip(i + 1)
            if self.text[i] == "]":
                return i + 1
            index = 0
            while True:
                i = self.skip(self.value(i, join_pointer(pointer, index)))
                index += 1
                if self.text[i] == "]":
                    return i + 1
                i = self.skip(i + 1)
        if ch == '"':
            end: int = json.decoder.scanstring(self.text, i + 1)[1]  # type: ignore[attr-defined]
            return end
        return _SCALAR.match(self.text, i).end()  # type: ignore[union-attr]


class _JsonPaths(_JsonPositions):
    """The same walk, into the values on the way to some pointers only: any other value is
    skipped whole by the C decoder (a finding's place needs a few positions of a file)."""

    def __init__(self, text: str, positions: Positions, fail: Any, wanted: set[str]) -> None:
        self.text, self.positions, self.fail, self.wanted = text, positions, fail, wanted

    def where(self, offset: int) -> tuple[int, int]:  # a few places: no table of lines
        start = self.text.rfind("\n", 0, offset) + 1
        return self.text.count("\n", 0, start) + 1, offset - start + 1

    def value(self, i: int, pointer: str) -> int:
        if pointer in self.wanted:
            return super().value(i, pointer)
        end: int = _DECODER.raw_decode(self.text, i)[1]
        return end


_DECODER = json.JSONDecoder()


def json_positions(text: str, pointers: Iterable[str], fail: Any) -> Positions:
    """The positions on the way to each pointer in a JSON text (every key of each object passed
    through, the values along the way), for a text json.loads accepts."""
    wanted = {""}
    for pointer in pointers:
        while pointer:
            wanted.add(pointer)
            pointer = pointer.rpartition("/")[0]
    positions = Positions()
    _JsonPaths(text, positions, fail, wanted).scan()
    return positions


# -- YAML (PyYAML is imported only when a YAML text is read: toolspec/yaml_text.py) ---------------


def parse_yaml(text: str, display: str) -> tuple[Any, Positions]:
    """YAML text (not a whole spec file: a SKILL.md's front matter) as plain data and the
    positions of its parts, as strictly as a spec file is read; LoadError when it cannot be."""

    def fail(code: str, message: str, line: int = 1, col: int = 1) -> LoadError:
        return LoadError(Diagnostic(display, line, col, code, message))

    return _parse_yaml(text, fail)


def _parse_yaml(text: str, fail: Any, scalar_keys: bool = False) -> tuple[Any, Positions]:
    from toolnexus_gen.toolspec.yaml_text import parse

    return parse(text, fail, scalar_keys, MAX_DEPTH)
