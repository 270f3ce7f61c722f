"""Tools that are REST calls (binding kind `http`, from a spec's `http` key or
`toolnexus-gen import openapi`). Needs httpx: `pip install 'toolnexus-runtime[rest]'`.

One `httpx.AsyncClient` per Toolkit, made on the first call (connections are reused across
calls; it keeps no cookies) and closed by `Toolkit.aclose()`; `Toolkit(handlers,
http_client=...)` uses a client of your own (auth, proxies, retries, mTLS; an httpx2 client works
too) and leaves closing it to you.

A call, after the arguments passed the tool's model:
- `{name}` in the URL path is the argument, percent-encoded as one path segment; a value that is
  empty, `.` or `..`, or holds `/`, `\\` or a control character (also once or twice
  percent-decoded) is an invalid-arguments result and nothing is sent: proxies that decode and
  normalise paths would otherwise let a value choose another endpoint;
- a relative URL is appended to the binding's base_url, or to `Toolkit(base_url=...)` (a URL
  for every relative tool, or a mapping {build-time base_url: run-time one});
- `${VAR}` in a header value is read from the environment now (a missing variable, or one
  holding what a header cannot carry, is an error result naming it, never its value); `{name}`
  in a header is the argument, the header left out when it is absent; a header value is
  printable ASCII, or the call is refused before anything is sent;
- the arguments `query` lists, and all the others when the body is `none`, go to the query
  string (lists as repeated keys, objects as JSON, nulls left out); otherwise the others are the
  JSON object or form body; with `body_arg`, that argument's value is the body and the others
  go to the query string;
- redirects are followed (5 at most) only within the same origin (scheme, host, port): a
  redirect elsewhere is an error result, so headers carrying credentials never leave the origin;
- the whole exchange (connection, redirects, the body) has one deadline: the binding's timeout,
  else 30 s with a client made here;
- `Accept-Encoding: gzip, deflate` is sent (unless the binding sets it) and the body is
  decompressed here, never past 10 MiB; a body in several or other encodings is not read;
- a 2xx JSON body is returned as data, any other as text (`result: text|json` decides instead;
  JSON with NaN or Infinity, or nested deeper than 128, is text); another status is the error
  result `HTTP <status>: <body, cut at 2,000 characters>`; a timeout or a connection failure
  is an error result too, and so is an answer that cannot be read.

No secret leaves through a result: the values the call read from the environment, and those of
the credential headers actually sent (Authorization, Cookie, *-Key, ..., whoever set them: a
client's `auth=` too; Basic credentials decoded), 8 characters or more, are replaced by
`[redacted]` in whatever comes back (a server that echoes the request's headers), also
JSON-escaped or percent-encoded; nothing here logs.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import importlib
import inspect
import json
import math
import os
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlencode, urlsplit

from ..datatypes import SourceError, ToolError, ToolResult
from ..failures import _invalid_text
from .base import BoundTool, SourceOptions, secret_forms

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..datatypes import ToolContext, ToolSpec
    from .base import ToolkitView as ToolkitCore

DEFAULT_TIMEOUT = 30.0  # seconds, for a client made here: for the whole exchange
MAX_REDIRECTS = 5
MAX_BODY = 10 * 1024 * 1024  # bytes of a 2xx body read at most (after decompression)
ERROR_READ = 64 * 1024  # bytes of a non-2xx body read at most
ERROR_BODY = 2_000  # characters of a non-2xx body in the error result
MIN_SECRET = 8  # shorter values are not searched for in results
MAX_DEPTH = 128  # JSON nested deeper is returned as text (serialisers stop near 255)
ACCEPT_ENCODING = "gzip, deflate"  # what is decompressed here, bounded
TOKEN = re.compile(r"\$\{([^{}]*)\}|\{([^{}]*)\}")
JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json\b|^text/json\b", re.IGNORECASE)
HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token
HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")  # what httpx sends as a header value (ASCII)
# headers the HTTP library owns (framing, routing, the connection): a tool never sets them
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "expect"}
    | {"trailer", "keep-alive"}
)
# headers whose value is a credential, whoever set them (the binding, a client's auth=, hooks)
CREDENTIAL = re.compile(
    r"(?i)^(authorization|proxy-authorization|cookie)$"
    r"|api[-_]?key|token|secret|passw|auth|key$|signature|session|credential"
)


class HttpStatusError(ToolError):
    """The endpoint answered with a status other than 2xx."""


class HttpTimeout(SourceError):
    """The endpoint did not answer in time."""


class HttpUnreachable(SourceError):
    """The request could not be sent or its answer read (connection, TLS, protocol)."""


class HttpBadResponse(ToolError):
    """The endpoint answered, but the answer cannot be used: larger than 10 MiB, compressed in a
    way that was not asked for or is broken, or not JSON where the binding says it is."""


def executor(toolkit: ToolkitCore[Any], options: SourceOptions) -> HttpExecutor:
    return HttpExecutor(options)


def _httpx(client: Any) -> Any:
    """The httpx module a client comes from (httpx, or its fork httpx2), or the one to use."""
    if client is not None:
        return importlib.import_module(type(client).__module__.split(".")[0])
    for name in ("httpx", "httpx2"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(
        "Tools bound to HTTP endpoints need httpx: pip install 'toolnexus-runtime[rest]'"
    )


class HttpExecutor:
    """The `http` tools of one Toolkit, sharing one client."""

    def __init__(self, options: SourceOptions) -> None:
        client = options.http_client
        if client is not None and not inspect.iscoroutinefunction(getattr(client, "send", None)):
            raise TypeError(
                f"http_client must be an httpx.AsyncClient (or httpx2's), not {type(client).__name__}"
            )
        self._httpx = _httpx(options.http_client)
        self._given = options.http_client
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._base_url = _checked_base(options.base_url)

    def bind(self, spec: ToolSpec) -> BoundTool:
        assert spec.binding is not None
        call = _Call.make(spec.name, spec.binding["http"], self._base_url)

        async def run(args: BaseModel, ctx: ToolContext) -> Any:
            return await self._send(
                call, args.model_dump(mode="json", by_alias=True, exclude_unset=True)
            )

        return run

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def _client_now(self) -> Any:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # a client's connections belong to the loop they were opened on; no cookie is
            # kept, so no server's Set-Cookie reaches another tool's server or another user
            self._client = self._httpx.AsyncClient(timeout=DEFAULT_TIMEOUT, cookies=_no_cookies())
            self._loop = loop
        return self._client

    async def _send(self, call: _Call, args: dict[str, Any]) -> Any:
        secrets = _Secrets()
        deadline = call.timeout
        if deadline is None and self._given is None:
            deadline = DEFAULT_TIMEOUT
        try:
            try:
                if deadline is None:
                    out = await self._exchange(call, args, secrets)
                else:
                    out = await asyncio.wait_for(self._exchange(call, args, secrets), deadline)
            except asyncio.TimeoutError:  # the whole exchange, however slowly it trickled
                raise HttpTimeout(
                    f"Tool '{call.name}': no answer from {_origin(call.url)} within {deadline:g} s"
                ) from None
            return secrets.redact(out)
        except _BadArgument as exc:
            problems = (((exc.argument,), exc.message),)
            return ToolResult(
                _invalid_text(call.name, problems), True, None, "invalid_arguments", problems
            )
        except ToolError as exc:  # an error result says no more than a result does
            raise type(exc)(secrets.redact(str(exc))) from None

    async def _exchange(self, call: _Call, args: dict[str, Any], secrets: _Secrets) -> Any:
        request_args = call.request(args, secrets)
        httpx = self._httpx
        client = self._client_now()
        origin = _origin(request_args["url"])
        try:
            request = client.build_request(**request_args)
            cookie = request_args["headers"].get("Cookie")
            for _ in range(MAX_REDIRECTS + 1):
                secrets.add_headers(request.headers)  # the client's own headers too
                response = await client.send(request, stream=True, follow_redirects=False)
                try:
                    secrets.add_headers(response.request.headers)  # as sent: after auth=, hooks
                    following = response.next_request if response.is_redirect else None
                    if following is None:
                        return await call.result(response, secrets)
                finally:
                    await response.aclose()
                if _origin(str(following.url)) != origin:
                    raise HttpStatusError(
                        f"HTTP {response.status_code}: redirected to {_origin(str(following.url))}, "
                        f"another origin than {origin}; not followed (credentials stay with the "
                        "origin they are meant for)"
                    )
                if cookie is not None:  # httpx leaves a Cookie header to its jar on a redirect
                    following.headers["Cookie"] = cookie
                request = following
            raise HttpStatusError(
                f"HTTP {response.status_code}: more than {MAX_REDIRECTS} redirects"
            )
        except httpx.TimeoutException as exc:
            seconds = call.timeout or (DEFAULT_TIMEOUT if self._given is None else None)
            within = f" within {seconds:g} s" if seconds else ""
            raise HttpTimeout(
                f"Tool '{call.name}': no answer from {origin}{within} ({type(exc).__name__})"
            ) from None
        except httpx.LocalProtocolError:  # its message may quote a header value: not repeated
            raise HttpUnreachable(
                f"Tool '{call.name}': the request to {origin} could not be sent: the HTTP "
                "library refused it (LocalProtocolError)"
            ) from None
        except httpx.HTTPError as exc:  # connection refused, DNS, TLS, a broken response
            reason = str(exc) or type(exc).__name__
            raise HttpUnreachable(
                f"Tool '{call.name}': cannot reach {origin}: {type(exc).__name__}: {reason}"
            ) from None


class _BadArgument(Exception):
    """An argument the request cannot carry: an invalid-arguments result, nothing sent."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument, self.message = argument, message


class _Unreadable(Exception):
    """A body this client did not ask for or cannot decompress (the reason)."""


def _no_cookies() -> CookieJar:
    """A cookie jar that takes no cookie and gives none."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


@dataclass(frozen=True)
class _Call:
    """One tool's binding, ready to make requests from arguments."""

    name: str
    method: str
    url: str  # the URL template, relative ones already joined to their base
    headers: dict[str, str]
    query: frozenset[str]
    body: str  # json | form | none
    body_arg: str | None
    timeout: float | None
    mode: str | None  # text | json | None (by Content-Type)

    @classmethod
    def make(cls, name: str, binding: Mapping[str, Any], base_url: Any) -> _Call:
        url = binding["url"]
        if "base_url" in binding:
            base = binding["base_url"]
            if isinstance(base_url, str):
                base = base_url
            elif isinstance(base_url, Mapping):
                base = base_url.get(base, base)
            url = base.rstrip("/") + "/" + url.lstrip("/")
        headers = dict(binding.get("headers", {}))
        for header in headers:  # the build refuses these (TN444); a hand-made table too
            if not sendable_header(header):
                raise ValueError(
                    f"Tool '{name}': a tool cannot set the header {header!r} (not a header "
                    "name, or one the HTTP client owns)"
                )
        return cls(
            name,
            binding["method"],
            url,
            headers,
            frozenset(binding.get("query", ())),
            binding.get("body", "none"),
            binding.get("body_arg"),
            binding.get("timeout"),
            binding.get("result"),
        )

    def request(self, args: dict[str, Any], secrets: _Secrets) -> dict[str, Any]:
        """build_request's arguments for one call (`secrets` gets the environment values read)."""
        used: set[str] = set()
        url = _fill_url(self.url, args, used)
        headers = {}
        for header, template in self.headers.items():
            value = self._header(header, template, args, used, secrets)
            if value is not None:
                headers[header] = value
        if not any(header.lower() == "accept-encoding" for header in headers):
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        params: list[tuple[str, str]] = []
        rest: dict[str, Any] = {}
        for key, value in args.items():
            if key in used:
                continue
            if key in self.query or self.body == "none" or (self.body_arg and key != self.body_arg):
                if value is not None:
                    params.extend((key, item) for item in _query_values(value))
            elif key != self.body_arg:
                rest[key] = value
        if params:  # after the URL's own query (httpx's params= would replace it)
            url += ("&" if "?" in url else "?") + urlencode(params, quote_via=quote)
        out: dict[str, Any] = {"method": self.method, "url": url, "headers": headers}
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.body != "none":
            payload = args.get(self.body_arg) if self.body_arg else rest
            if self.body_arg is None or self.body_arg in args:
                if self.body == "json":
                    out["json"] = payload
                elif isinstance(payload, Mapping):
                    out["data"] = {k: _form_value(v) for k, v in payload.items() if v is not None}
                else:
                    raise ToolError(
                        f"Tool '{self.name}': a form body needs an object, not {type(payload).__name__}"
                    )
        return out

    def _header(
        self, header: str, template: str, args: dict[str, Any], used: set[str], secrets: _Secrets
    ) -> str | None:
        parts, start = [], 0
        for match in TOKEN.finditer(template):
            parts.append(template[start : match.start()])
            start = match.end()
            env, arg = match.groups()
            if env is not None:
                value = os.environ.get(env)
                if value is None:
                    raise ToolError(
                        f"Tool '{self.name}' cannot run: the environment variable {env} is not set "
                        f"(the {header} header is read from it)"
                    )
                secrets.add(value)
                if not HEADER_TEXT.fullmatch(value):
                    raise ToolError(
                        f"Tool '{self.name}' cannot run: the environment variable {env} holds "
                        f"{_unsendable(value, show=False)}, which a header cannot carry (the "
                        f"{header} header is read from it; its value is not shown)"
                    )
                parts.append(value)
            else:
                used.add(arg)
                if args.get(arg) is None:
                    return None  # an optional argument that is absent: no header
                text = _scalar(args[arg])
                if not HEADER_TEXT.fullmatch(text):
                    raise _BadArgument(
                        arg,
                        f"a header value must be printable ASCII; this one holds "
                        f"{_unsendable(text, show=True)}",
                    )
                parts.append(text)
        parts.append(template[start:])
        value = "".join(parts).strip(" \t")  # a field value has no whitespace around it
        if not HEADER_TEXT.fullmatch(value):  # a literal part: the build refuses it (TN444)
            raise ToolError(
                f"Tool '{self.name}': the {header} header cannot be sent: it holds "
                f"{_unsendable(value, show=False)}"
            )
        return value

    async def result(self, response: Any, secrets: _Secrets) -> Any:
        status = response.status_code
        if not 200 <= status < 300:
            try:
                body, complete = await _read(response, ERROR_READ)
            except _Unreadable as exc:
                raise HttpStatusError(
                    f"HTTP {status}: {response.reason_phrase or 'no reason'} ({exc}; not read)"
                ) from None
            text = secrets.redact(_text(response, body).strip())  # before the cut
            if not complete:
                text = f"{text[:ERROR_BODY]}... (the rest not read)"
            elif len(text) > ERROR_BODY:
                text = f"{text[:ERROR_BODY]}... ({len(text) - ERROR_BODY} more characters)"
            raise HttpStatusError(f"HTTP {status}: {text or response.reason_phrase or 'no body'}")
        try:
            body, complete = await _read(response, MAX_BODY)
        except _Unreadable as exc:
            raise HttpBadResponse(f"HTTP {status}: {exc}; not read") from None
        if not complete:
            raise HttpBadResponse(
                f"HTTP {status}: the response is larger than {MAX_BODY // 1024 // 1024} MiB; "
                "not read"
            )
        if not body:
            return f"HTTP {status}: no content"
        is_json = bool(JSON_TYPE.match(response.headers.get("content-type", "")))
        if self.mode == "json" or (self.mode is None and is_json):
            try:
                return _json(body)
            except ValueError as exc:
                if self.mode == "json":
                    raise HttpBadResponse(
                        f"HTTP {status}: the body is not JSON this tool can return ({exc}; "
                        f"{response.headers.get('content-type', 'no Content-Type')})"
                    ) from None
        return _text(response, body)


def sendable_header(name: str) -> bool:
    """A header name a tool may set: an HTTP token the HTTP client does not own."""
    lower = name.lower()
    return (
        bool(HEADER_NAME.fullmatch(name))
        and lower not in RESERVED_HEADERS
        and not lower.startswith("proxy-")
    )


def _unsendable(text: str, *, show: bool) -> str:
    """What in `text` a header cannot carry, in words (the character itself only if `show`)."""
    bad = next(c for c in text if not HEADER_TEXT.fullmatch(c))
    if bad in "\r\n":
        return "a line break"
    if ord(bad) < 0x20 or ord(bad) == 0x7F:
        return f"a control character (U+{ord(bad):04X})"
    return f"a non-ASCII character ({bad!r})" if show else "a non-ASCII character"


def _fill_url(template: str, args: dict[str, Any], used: set[str]) -> str:
    """The URL with each {name} replaced by its argument, percent-encoded so that no value adds
    a segment, a query or a fragment; a path value that would walk the path anyway, behind a
    proxy that decodes and normalises it, is refused."""
    path, mark, query = template.partition("?")

    def fill(part: str, in_path: bool) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(2)
            if name is None:
                return match.group(0)
            used.add(name)
            text = _scalar(args[name])
            if in_path:
                _check_segment(name, text)
            return quote(text, safe="")

        return TOKEN.sub(value, part)

    return fill(path, True) + mark + fill(query, False)


def _check_segment(name: str, text: str) -> None:
    """A path value is one segment, seen the way a decoding proxy sees it: not empty, `.` or
    `..` (or `..;`, which Tomcat reads as `..`), no `/`, `\\` or control character."""
    forms, form = [text], text
    for _ in range(2):  # once and twice decoded: proxies and frameworks decode again
        form = unquote(form)
        if form == forms[-1]:
            break
        forms.append(form)
    for form in forms:
        if form.split(";", 1)[0] in ("", ".", ".."):
            what = "empty" if not text else repr(form.split(";", 1)[0])
            raise _BadArgument(
                name,
                f"a path value cannot be {what}: it would change the path the request goes to",
            )
        if "/" in form or "\\" in form or any(ord(c) < 0x20 or ord(c) == 0x7F for c in form):
            raise _BadArgument(
                name,
                "a path value cannot hold '/', '\\' or a control character (in any encoding): "
                "it is one segment of the path",
            )


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _query_values(value: Any) -> list[str]:
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return [_scalar(v) for v in value if v is not None]
    if isinstance(value, (dict, list)):
        return [json.dumps(value, ensure_ascii=False, separators=(",", ":"))]
    return [_scalar(value)]


def _form_value(value: Any) -> Any:
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        return [_scalar(v) for v in value if v is not None]
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _scalar(value)


# -- the body -----------------------------------------------------------------------------------


async def _read(response: Any, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body, decompressed here (never more than that is made), and
    whether that is all of it; raises _Unreadable for an encoding not asked for."""
    decoder = _Decoder.of(response)
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


class _Decoder:
    """The body's one content coding undone, never producing more than asked for."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        wbits = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}.get(coding)
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self._started = False

    @classmethod
    def of(cls, response: Any) -> _Decoder:
        codings = [
            c.strip().lower()
            for c in response.headers.get_list("content-encoding", split_commas=True)
            if c.strip() and c.strip().lower() != "identity"
        ]
        codings = ["gzip" if c == "x-gzip" else c for c in codings]
        if len(codings) > 1:
            raise _Unreadable(f"the body is encoded {len(codings)} times ({', '.join(codings)})")
        if codings and codings[0] not in ("gzip", "deflate"):
            raise _Unreadable(
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
            raise _Unreadable(f"the body is not valid {self.coding}") from None

    def flush(self, room: int) -> bytes:
        if self._zlib is None:
            return b""
        try:
            return self._zlib.flush(room)
        except zlib.error:
            raise _Unreadable(f"the body is not valid {self.coding}") from None


def _json(body: bytes) -> Any:
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


def _text(response: Any, body: bytes) -> str:
    encoding = response.charset_encoding or "utf-8"
    try:
        return body.decode(encoding, errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


# -- secrets ------------------------------------------------------------------------------------


class _Secrets:
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


# -- URLs ---------------------------------------------------------------------------------------


def _origin(url: str) -> str:
    """scheme://host[:port], the port shown only when it is not the scheme's own."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    shown = f":{port}" if port and port != {"http": 80, "https": 443}.get(scheme) else ""
    return f"{scheme}://{(parts.hostname or '').lower()}{shown}"


def _checked_base(base_url: Any) -> Any:
    """Toolkit(base_url=...): a URL, or a mapping of build-time base URLs to run-time ones."""
    if base_url is None:
        return None
    urls = [base_url] if isinstance(base_url, str) else list(dict(base_url).values())
    for url in urls:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an absolute http(s) URL, not {url!r}")
    return base_url
