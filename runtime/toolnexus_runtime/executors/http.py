"""Tools that are REST calls (binding kind `http`, from a spec's `http` key or
`toolnexus-gen import openapi`). Needs httpx: `pip install 'toolnexus-runtime[rest]'`.

One `httpx.AsyncClient` per Toolkit, made on the first call (connections are reused across
calls; it keeps no cookies) and closed by `Toolkit.aclose()`; `Toolkit(handlers,
http_client=...)` uses a client of your own (auth, proxies, retries, mTLS; an httpx2 client works
too) and leaves closing it to you.

A call, after the arguments passed the tool's model (and sent as the model wrote them, not
as pydantic normalises them: a URL without an added slash, a number as written):
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
  string; otherwise the others are the JSON object (sent as the binding's `content_type`, e.g.
  application/merge-patch+json, else application/json), urlencoded form body or
  multipart/form-data body (scalars as text parts, lists of scalars as repeated parts, objects
  as application/json parts, the fields `parts` marks `file` as file parts whose content is the
  argument's text, base64-decoded when marked so: no local file is ever read); with `body_arg`,
  that argument's value is the body and the others go to the query string. A `text` body is that
  argument's text as UTF-8, a `binary` body the bytes of its base64 text (else invalid
  arguments), sent as the binding's `content_type` (never a header's). Lists, objects and nulls
  are written as the binding's `styles` (and a form's `encoding`) say, after OpenAPI's
  serialisation styles (http_encode.py), else lists as repeated keys and objects as JSON; an
  argument whose name a provider refuses goes under its own name (`names`: `StartTime<`);
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
import importlib
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic_core import to_jsonable_python

from ..datatypes import SourceError, ToolError, ToolResult
from ..failures import _invalid_text
from .base import AsWritten, BoundTool, SourceOptions
from .http_encode import (
    Unsendable,
    fill_header,
    fill_url,
    json_media_type,
    multipart_parts,
    query_parts,
    raw_body,
    raw_media_type,
    sendable_header,
)
from .http_read import ACCEPT_ENCODING, Secrets, Unreadable, body_text, parse_json, read_body

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..datatypes import ToolContext, ToolSpec
    from .base import ToolkitView as ToolkitCore

DEFAULT_TIMEOUT = 30.0  # seconds, for a client made here: for the whole exchange
MAX_REDIRECTS = 5
EMPTY = "toolnexus-empty-form"  # the boundary of a multipart body without parts
# each raw body's Content-Type when its binding names none
RAW_DEFAULT = {"text": "text/plain; charset=utf-8", "binary": "application/octet-stream"}
MAX_BODY = 10 * 1024 * 1024  # bytes of a 2xx body read at most (after decompression)
ERROR_READ = 64 * 1024  # bytes of a non-2xx body read at most
ERROR_BODY = 2_000  # characters of a non-2xx body in the error result

JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json\b|^text/json\b", re.IGNORECASE)


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
        return _Bound(spec.model, call, self._send)

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
        secrets = Secrets()
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

    async def _exchange(self, call: _Call, args: dict[str, Any], secrets: Secrets) -> Any:
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


class _Bound(AsWritten):
    """One http tool: the arguments as the model wrote them (AsWritten) go to its endpoint."""

    def __init__(self, model: type[BaseModel], call: _Call, send: Any) -> None:
        super().__init__(model)
        self.call, self._send = call, send

    async def __call__(self, arguments: Any, ctx: ToolContext) -> Any:
        # JSON values as sent; a caller's Python values (a datetime) as JSON would give them
        return await self._send(self.call, to_jsonable_python(arguments))


def _sendable_text(name: str, value: Any) -> None:
    """Refuse text no request can carry: a lone surrogate (JSON's "\\udc80") has no UTF-8
    form, so encoding the URL, a header, a form or a multipart part would fail mid-request."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Unsendable(
                name, "this text holds a lone surrogate (U+D800-U+DFFF), which has no UTF-8 form"
            ) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _sendable_text(name, key)
            _sendable_text(name, item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _sendable_text(name, item)


class _BadArgument(Exception):
    """An argument the request cannot carry: an invalid-arguments result, nothing sent."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument, self.message = argument, message


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
    body: str  # json | form | multipart | text | binary | none
    body_arg: str | None
    timeout: float | None
    mode: str | None  # text | json | None (by Content-Type)
    # argument -> its OpenAPI serialisation ({style, explode}); form-body property -> encoding
    styles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    encoding: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)  # argument -> name on the wire
    content_type: str | None = None  # a JSON body's other media type; a text or binary body's
    parts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # multipart fields

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
        content_type = binding.get("content_type")
        body = binding.get("body", "none")
        if body in RAW_DEFAULT:  # the build refuses these (TN445, TN442); a hand-made table too
            content_type = RAW_DEFAULT[body] if content_type is None else content_type
            if not raw_media_type(content_type) or binding.get("body_arg") is None:
                raise ValueError(
                    f"Tool '{name}': a {body} body needs body_arg and a content_type that is one "
                    f"media type with parameters a header carries, not {content_type!r}"
                )
        elif content_type is not None and not json_media_type(content_type):
            raise ValueError(  # the build refuses it (TN445); a hand-made table too
                f"Tool '{name}': content_type {content_type!r} is not a JSON media type "
                "(application/json or type/subtype+json, without parameters)"
            )
        return cls(
            name,
            binding["method"],
            url,
            headers,
            frozenset(binding.get("query", ())),
            body,
            binding.get("body_arg"),
            binding.get("timeout"),
            binding.get("result"),
            dict(binding.get("styles", {})),
            dict(binding.get("encoding", {})),
            dict(binding.get("names", {})),
            content_type,
            dict(binding.get("parts", {})),
        )

    def request(self, args: dict[str, Any], secrets: Secrets) -> dict[str, Any]:
        """build_request's arguments for one call (`secrets` gets the environment values read)."""
        try:
            for key, value in args.items():
                _sendable_text(key, value)
            return self._request(args, secrets)
        except Unsendable as exc:
            raise _BadArgument(exc.argument, exc.message) from None

    def _request(self, args: dict[str, Any], secrets: Secrets) -> dict[str, Any]:
        used: set[str] = set()
        url = fill_url(self.url, args, used, self.styles)
        headers = {}
        for header, template in self.headers.items():
            value = fill_header(self.name, header, template, args, used, secrets, self.styles)
            if value is not None:
                headers[header] = value
        if not any(header.lower() == "accept-encoding" for header in headers):
            headers["Accept-Encoding"] = ACCEPT_ENCODING
        params: list[str] = []
        rest: dict[str, Any] = {}
        for key, value in args.items():
            if key in used:
                continue
            if key in self.query or self.body == "none" or (self.body_arg and key != self.body_arg):
                params.extend(query_parts(self.names.get(key, key), value, self.styles.get(key)))
            elif key != self.body_arg:
                rest[key] = value
        if params:  # after the URL's own query (httpx's params= would replace it)
            url += ("&" if "?" in url else "?") + "&".join(params)
        out: dict[str, Any] = {"method": self.method, "url": url, "headers": headers}
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.body != "none":
            payload = args.get(self.body_arg) if self.body_arg else rest
            if self.body_arg is None or self.body_arg in args:
                if self.body in RAW_DEFAULT:
                    # the argument's text or bytes as they are, as the binding's media type alone
                    for header in [h for h in headers if h.lower() == "content-type"]:
                        del headers[header]
                    if payload is not None:
                        assert self.body_arg is not None and self.content_type is not None
                        out["content"] = raw_body(self.body_arg, payload, self.body)
                        headers["Content-Type"] = self.content_type
                elif self.body == "json":
                    if self.body_arg is None and self.names:
                        payload = {self.names.get(k, k): v for k, v in rest.items()}
                    out["json"] = payload
                    if self.content_type is not None:  # httpx keeps a Content-Type given
                        headers["Content-Type"] = self.content_type
                elif isinstance(payload, Mapping) and self.body == "multipart":
                    # the boundary is httpx's random one: a Content-Type given (a spec's, or an
                    # argument's) would set it, and text holding it would forge parts
                    for header in [h for h in headers if h.lower() == "content-type"]:
                        del headers[header]
                    named = self.names if self.body_arg is None else {}
                    parts = [
                        part
                        for key, value in payload.items()
                        for part in multipart_parts(named.get(key, key), value, self.parts.get(key))
                    ]
                    if parts:
                        out["files"] = parts
                    else:  # httpx sends no body for no parts: an empty multipart body
                        headers["Content-Type"] = f"multipart/form-data; boundary={EMPTY}"
                        out["content"] = f"--{EMPTY}--\r\n".encode("ascii")
                elif isinstance(payload, Mapping):
                    named = self.names if self.body_arg is None else {}
                    form = [
                        part
                        for key, value in payload.items()
                        for part in query_parts(named.get(key, key), value, self.encoding.get(key))
                    ]
                    headers["Content-Type"] = "application/x-www-form-urlencoded"
                    out["content"] = "&".join(form).encode("ascii")
                else:
                    raise ToolError(
                        f"Tool '{self.name}': a {self.body} body needs an object, not "
                        f"{type(payload).__name__}"
                    )
        return out

    async def result(self, response: Any, secrets: Secrets) -> Any:
        status = response.status_code
        if not 200 <= status < 300:
            try:
                body, complete = await read_body(response, ERROR_READ)
            except Unreadable as exc:
                raise HttpStatusError(
                    f"HTTP {status}: {response.reason_phrase or 'no reason'} ({exc}; not read)"
                ) from None
            text = secrets.redact(body_text(response, body).strip())  # before the cut
            if not complete:
                text = f"{text[:ERROR_BODY]}... (the rest not read)"
            elif len(text) > ERROR_BODY:
                text = f"{text[:ERROR_BODY]}... ({len(text) - ERROR_BODY} more characters)"
            raise HttpStatusError(f"HTTP {status}: {text or response.reason_phrase or 'no body'}")
        try:
            body, complete = await read_body(response, MAX_BODY)
        except Unreadable as exc:
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
                return parse_json(body)
            except ValueError as exc:
                if self.mode == "json":
                    raise HttpBadResponse(
                        f"HTTP {status}: the body is not JSON this tool can return ({exc}; "
                        f"{response.headers.get('content-type', 'no Content-Type')})"
                    ) from None
        return body_text(response, body)


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
