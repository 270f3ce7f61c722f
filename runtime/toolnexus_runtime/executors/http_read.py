"""Reading an `http` tool's answer: the body read up to a bound and decompressed here (never
more than asked for is made), JSON parsed only where a result can hold it, and the credentials
a call used kept out of whatever comes back."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import zlib
from typing import Any

from .base import secret_forms

MAX_DEPTH = 128  # JSON nested deeper is returned as text (serialisers stop near 255)
MIN_SECRET = 8  # shorter values are not searched for in results
ACCEPT_ENCODING = "gzip, deflate"  # what is decompressed here, bounded
# headers whose value is a credential, whoever set them (the binding, a client's auth=, hooks)
CREDENTIAL = re.compile(
    r"(?i)^(authorization|proxy-authorization|cookie)$"
    r"|api[-_]?key|token|secret|passw|auth|key$|signature|session|credential"
)


class Unreadable(Exception):
    """A body this client did not ask for or cannot decompress (the reason)."""


# -- the body -----------------------------------------------------------------------------------


async def read_body(response: Any, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body, decompressed here (never more than that is made), and
    whether that is all of it; raises Unreadable for an encoding not asked for."""
    decoder = Decoder.of(response)
    chunks: list[bytes] = []
    size = 0
    async for raw in response.aiter_raw():
        data = decoder.feed(raw, limit - size + 1)
        if size + len(data) > limit:
            chunks.append(data[: limit - size])
            return b"".join(chunks), False
        chunks.append(data)
        size += len(data)
    data = decoder.flush(limit - size + 1)
    if size + len(data) > limit:
        chunks.append(data[: limit - size])
        return b"".join(chunks), False
    chunks.append(data)
    return b"".join(chunks), True


class Decoder:
    """The body's one content coding undone, never producing more than asked for."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        wbits = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}.get(coding)
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self._started = False

    @classmethod
    def of(cls, response: Any) -> Decoder:
        codings = [
            c.strip().lower()
            for c in response.headers.get_list("content-encoding", split_commas=True)
            if c.strip() and c.strip().lower() != "identity"
        ]
        codings = ["gzip" if c == "x-gzip" else c for c in codings]
        if len(codings) > 1:
            raise Unreadable(f"the body is encoded {len(codings)} times ({', '.join(codings)})")
        if codings and codings[0] not in ("gzip", "deflate"):
            raise Unreadable(
                f"the body is encoded with {codings[0]}, which was not asked for "
                f"(Accept-Encoding: {ACCEPT_ENCODING})"
            )
        return cls(codings[0] if codings else "identity")

    def feed(self, data: bytes, room: int) -> bytes:
        if self._zlib is None:
            return data
        if not self._started and self.coding == "deflate" and data:
            self._started = True
            try:  # "deflate" is zlib-wrapped by the standard, raw by some servers
                return self._zlib.decompress(data, room)
            except zlib.error:
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            return self._zlib.decompress(data, room)
        except zlib.error:
            raise Unreadable(f"the body is not valid {self.coding}") from None

    def flush(self, room: int) -> bytes:
        if self._zlib is None:
            return b""
        try:
            return self._zlib.flush(room)
        except zlib.error:
            raise Unreadable(f"the body is not valid {self.coding}") from None


def parse_json(body: bytes) -> Any:
    """The body as JSON data; ValueError for what is not JSON a result can hold (NaN, Infinity,
    a number too large for a float, nesting deeper than MAX_DEPTH)."""
    try:
        data = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
            stack.extend(
                (v, depth + 1) for v in (node.values() if isinstance(node, dict) else node)
            )
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a number")
    return value


def body_text(response: Any, body: bytes) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


# -- secrets ------------------------------------------------------------------------------------


class Secrets:
    """The credentials one call used, and the forms a server could echo them in."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def add(self, value: str) -> None:
        value = value.strip()
        if len(value) >= MIN_SECRET and value not in self._values:
            self._values.add(value)
            self._pattern = None

    def add_headers(self, headers: Any) -> None:
        for name, value in headers.items():
            if CREDENTIAL.search(name):
                self._credential(name.lower(), value)

    def _credential(self, name: str, value: str) -> None:
        if name == "cookie":
            for pair in value.split(";"):
                self.add(pair.partition("=")[2])
            return
        scheme, _, rest = value.strip().partition(" ")
        if not (rest and re.fullmatch(r"[A-Za-z][\w.+-]*", scheme)):
            self.add(value)  # no `Scheme credentials` shape: the whole value
            return
        self.add(rest)
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(rest.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return
            self.add(decoded)
            self.add(decoded.partition(":")[2])

    def redact(self, value: Any) -> Any:
        if not self._values:
            return value
        if self._pattern is None:
            forms = {form for secret in self._values for form in secret_forms(secret, MIN_SECRET)}
            self._pattern = re.compile(
                "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
            )
        return _redact(value, self._pattern)


def _redact(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub("[redacted]", value)
    if isinstance(value, list):
        return [_redact(item, pattern) for item in value]
    if isinstance(value, dict):
        return {_redact(k, pattern): _redact(v, pattern) for k, v in value.items()}
    return value
