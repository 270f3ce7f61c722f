"""Tools that are REST calls (binding kind `http`, from a spec's `http` key or
`toolnexus-gen import openapi`). Needs httpx: `pip install 'toolnexus-runtime[rest]'`.

One `httpx.AsyncClient` per Toolkit, made on the first call (connections are reused across
calls) and closed by `Toolkit.aclose()`; `Toolkit(handlers, http_client=...)` uses a client of
your own (auth, proxies, retries, mTLS; an httpx2 client works too) and leaves closing it to you.

A call, after the arguments passed the tool's model:
- `{name}` in the URL is the argument, percent-encoded as one path segment: `/`, `?`, `#`, `%`
  and a `.`/`..` segment are all encoded, so no value changes where the request goes;
- a relative URL is appended to the binding's base_url, or to `Toolkit(base_url=...)` (a URL
  for every relative tool, or a mapping {build-time base_url: run-time one});
- `${VAR}` in a header value is read from the environment now (a missing variable is an error
  result naming it, never a value); `{name}` in a header is the argument, the header left out
  when it is absent;
- the arguments `query` lists, and all the others when the body is `none`, go to the query
  string (lists as repeated keys, objects as JSON, nulls left out); otherwise the others are the
  JSON object or form body; with `body_arg`, that argument's value is the body and the others
  go to the query string;
- redirects are followed (5 at most) only within the same origin (scheme, host, port): a
  redirect elsewhere is an error result, so headers carrying credentials never leave the origin;
- a 2xx JSON body is returned as data, any other as text (`result: text|json` decides instead);
  another status is the error result `HTTP <status>: <body, cut at 2,000 characters>`; a
  timeout or a connection failure is an error result too.

No secret leaves through a result: the values the call read from the environment (8 characters
or more) are replaced by `[redacted]` in whatever comes back (a server that echoes the request's
headers), and nothing here logs.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from ..core import SourceError, ToolError
from . import BoundTool, SourceOptions

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..core import ToolContext, ToolkitCore, ToolSpec

DEFAULT_TIMEOUT = 30.0  # seconds, for a client made here
MAX_REDIRECTS = 5
MAX_BODY = 10 * 1024 * 1024  # bytes read from one response at most
ERROR_BODY = 2_000  # characters of a non-2xx body in the error result
MIN_SECRET = 8  # shorter environment values are not searched for in results
TOKEN = re.compile(r"\$\{([^{}]*)\}|\{([^{}]*)\}")
JSON_TYPE = re.compile(r"^application/(?:[\w.+-]+\+)?json\b|^text/json\b", re.IGNORECASE)


class HttpStatusError(ToolError):
    """The endpoint answered with a status other than 2xx."""


class HttpTimeout(SourceError):
    """The endpoint did not answer in time."""


class HttpUnreachable(SourceError):
    """The request could not be sent or its answer read (connection, TLS, protocol)."""


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
            # a client's connections belong to the loop they were opened on
            self._client = self._httpx.AsyncClient(timeout=DEFAULT_TIMEOUT)
            self._loop = loop
        return self._client

    async def _send(self, call: _Call, args: dict[str, Any]) -> Any:
        secrets: list[str] = []
        try:
            return _redact(await self._exchange(call, args, secrets), secrets)
        except ToolError as exc:  # an error result says no more than a result does
            raise type(exc)(_redact(str(exc), secrets)) from None

    async def _exchange(self, call: _Call, args: dict[str, Any], secrets: list[str]) -> Any:
        request_args = call.request(args, secrets)
        httpx = self._httpx
        client = self._client_now()
        origin = _origin(request_args["url"])
        try:
            request = client.build_request(**request_args)
            for _ in range(MAX_REDIRECTS + 1):
                response = await client.send(request, stream=True, follow_redirects=False)
                try:
                    following = response.next_request if response.is_redirect else None
                    if following is None:
                        return call.result(response, await _read(response))
                finally:
                    await response.aclose()
                if _origin(str(following.url)) != origin:
                    raise HttpStatusError(
                        f"HTTP {response.status_code}: redirected to {_origin(str(following.url))}, "
                        f"another origin than {origin}; not followed (credentials stay with the "
                        "origin they are meant for)"
                    )
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
        except httpx.HTTPError as exc:  # connection refused, DNS, TLS, a broken response
            reason = str(exc) or type(exc).__name__
            raise HttpUnreachable(
                f"Tool '{call.name}': cannot reach {origin}: {type(exc).__name__}: {reason}"
            ) from None


async def _read(response: Any) -> bytes:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_BODY:
            raise HttpStatusError(
                f"HTTP {response.status_code}: the response is larger than {MAX_BODY // 1024 // 1024} MiB; not read"
            )
        chunks.append(chunk)
    return b"".join(chunks)


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
        return cls(
            name,
            binding["method"],
            url,
            dict(binding.get("headers", {})),
            frozenset(binding.get("query", ())),
            binding.get("body", "none"),
            binding.get("body_arg"),
            binding.get("timeout"),
            binding.get("result"),
        )

    def request(self, args: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
        """build_request's arguments for one call (`secrets` gets the environment values read)."""
        used: set[str] = set()
        url = _fill_url(self.url, args, used)
        headers = {}
        for header, template in self.headers.items():
            value = self._header(header, template, args, used, secrets)
            if value is not None:
                headers[header] = value
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
        self, header: str, template: str, args: dict[str, Any], used: set[str], secrets: list[str]
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
                if len(value) >= MIN_SECRET:
                    secrets.append(value)
                parts.append(value)
            else:
                used.add(arg)
                if args.get(arg) is None:
                    return None  # an optional argument that is absent: no header
                text = _scalar(args[arg])
                if "\r" in text or "\n" in text:
                    raise ToolError(
                        f"Invalid arguments for tool '{self.name}': {arg}: a header value cannot "
                        "hold a line break"
                    )
                parts.append(text)
        parts.append(template[start:])
        return "".join(parts)

    def result(self, response: Any, body: bytes) -> Any:
        status = response.status_code
        if not 200 <= status < 300:
            text = _text(response, body).strip()
            if len(text) > ERROR_BODY:
                text = f"{text[:ERROR_BODY]}... ({len(text) - ERROR_BODY} more characters)"
            raise HttpStatusError(f"HTTP {status}: {text or response.reason_phrase or 'no body'}")
        if not body:
            return f"HTTP {status}: no content"
        is_json = bool(JSON_TYPE.match(response.headers.get("content-type", "")))
        if self.mode == "json" or (self.mode is None and is_json):
            try:
                return json.loads(body)
            except ValueError:
                if self.mode == "json":
                    raise HttpStatusError(
                        f"HTTP {status}: the body is not JSON "
                        f"({response.headers.get('content-type', 'no Content-Type')})"
                    ) from None
        return _text(response, body)


def _fill_url(template: str, args: dict[str, Any], used: set[str]) -> str:
    """The URL with each {name} replaced by its argument, percent-encoded so that no value adds
    a segment, a query or a fragment, or walks up the path."""
    path, mark, query = template.partition("?")

    def fill(part: str) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(2)
            if name is None:
                return match.group(0)
            used.add(name)
            return quote(_scalar(args[name]), safe="")

        return TOKEN.sub(value, part)

    segments = []
    for segment in path.split("/"):
        filled = fill(segment)
        if filled != segment and filled in (".", ".."):  # a value may not walk up the path
            filled = filled.replace(".", "%2E")
        segments.append(filled)
    return "/".join(segments) + mark + fill(query)


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


def _text(response: Any, body: bytes) -> str:
    return body.decode(response.charset_encoding or "utf-8", errors="replace")


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


def _redact(value: Any, secrets: list[str]) -> Any:
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "[redacted]")
        return value
    if isinstance(value, list):
        return [_redact(item, secrets) for item in value]
    if isinstance(value, dict):
        return {_redact(k, secrets): _redact(v, secrets) for k, v in value.items()}
    return value


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
