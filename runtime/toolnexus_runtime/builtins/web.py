"""webfetch: one http(s) GET, refusing what a model should not reach from here.

- Only http and https; no credentials in the URL.
- With `fetch_allow` only its hosts are fetched. Otherwise every address the host resolves to
  must be a public one: loopback, private, link-local (cloud metadata at 169.254.169.254),
  shared, reserved and multicast addresses are refused unless the host is in `fetch_allow`.
- The connection goes to the address that was checked (never a second lookup), so a name that
  resolves differently a moment later (DNS rebinding) cannot slip through; TLS still verifies
  the certificate against the host name. Each redirect is checked the same way.
- At most MAX_BYTES of body, within the timeout as a whole (connect, redirects and reading).
- HTML becomes markdown through markdownify (the optional extra `toolnexus-runtime[webfetch]`),
  or plain text through the standard library's HTML parser.

Proxies from the environment are not used: a proxy would make the address check meaningless.
"""

from __future__ import annotations

import asyncio
import http.client
import ipaddress
import socket
import ssl
import time
from collections.abc import Collection
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..core import ToolError

MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 30.0
USER_AGENT = "toolnexus-runtime webfetch"
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "+json", "+xml")
_ACCEPT = {
    "markdown": "text/markdown;q=1.0, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
    "text": "text/plain;q=1.0, text/html;q=0.9, */*;q=0.1",
    "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1",
}


def allow_list(hosts: Collection[str] | None) -> frozenset[str] | None:
    if hosts is None:
        return None
    if isinstance(hosts, str):
        raise TypeError("fetch_allow is a collection of host names, not one string")
    return frozenset(host.lower().rstrip(".") for host in hosts)


async def webfetch(args: dict[str, Any], allow: frozenset[str] | None, limit: int) -> str:
    fmt = args.get("format") or "markdown"
    timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
    body, kind, url = await asyncio.to_thread(_fetch, args["url"], allow, timeout, fmt)
    return _render(body, kind, fmt, url, limit)


def _resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to, in the resolver's order."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ToolError(f"cannot resolve host {host!r}: {exc}") from None
    addresses: list[str] = []
    for *_, sockaddr in found:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class _HTTP(http.client.HTTPConnection):
    """Talks to `host` (its Host header) at the address `ip` that was checked."""

    def __init__(self, host: str, port: int, ip: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.ip = ip

    def connect(self) -> None:
        self.sock = socket.create_connection((self.ip, self.port), self.timeout)


class _HTTPS(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, ip: str, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self.tls)
        self.ip = ip

    def connect(self) -> None:
        sock = socket.create_connection((self.ip, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


def _fetch(
    url: str, allow: frozenset[str] | None, timeout: float, fmt: str
) -> tuple[bytes, Any, str]:
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        scheme, host, port, target = _check(url, allow)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        connection = (_HTTPS if scheme == "https" else _HTTP)(host, port, target, left)
        try:
            path = urlsplit(url)._replace(scheme="", netloc="", fragment="").geturl() or "/"
            connection.request(
                "GET",
                path if path.startswith("/") else "/" + path,
                headers={
                    "User-Agent": USER_AGENT,
                    "Accept": _ACCEPT.get(fmt, "*/*"),
                    "Accept-Encoding": "identity",
                },
            )
            response = connection.getresponse()
            location = response.getheader("Location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                continue
            if not 200 <= response.status < 300:
                raise ToolError(f"HTTP {response.status} {response.reason} from {url}")
            return _body(response, connection, deadline, timeout), response.headers, url
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError) or time.monotonic() >= deadline:
                break
            raise ToolError(f"fetching {url} failed: {exc}") from None
        finally:
            connection.close()
    else:
        raise ToolError(f"more than {MAX_REDIRECTS} redirects from {url}; stopped.")
    raise ToolError(f"fetching {url} took longer than the timeout ({timeout:g} s).")


def _check(url: str, allow: frozenset[str] | None) -> tuple[str, str, int, str]:
    """(scheme, host, port, the address to connect to) of a URL this toolkit may fetch."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolError(
            f"webfetch takes http and https URLs only, not {scheme + ':' if scheme else url!r}."
        )
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ToolError(f"{url!r} names no host.")
    if parts.username is not None or parts.password is not None:
        raise ToolError("URLs with credentials (user:password@) are not fetched.")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ToolError(f"{url!r} has an invalid port.") from None
    listed = allow is not None and host in allow
    if allow is not None and not listed:
        raise ToolError(
            f"{host} is not in this toolkit's fetch_allow list; it fetches only from: "
            f"{', '.join(sorted(allow)) or '(no host)'}."
        )
    addresses = _resolve(host, port)
    if not addresses:
        raise ToolError(f"cannot resolve host {host!r}.")
    if not listed:
        for address in addresses:
            if not is_public(address):
                raise ToolError(
                    f"{host} resolves to {address}, a loopback, private, link-local or reserved "
                    "address; refused (a toolkit reaches such hosts only when they are in its "
                    "fetch_allow list)."
                )
    return scheme, host, port, addresses[0]


def _body(
    response: http.client.HTTPResponse,
    connection: http.client.HTTPConnection,
    deadline: float,
    timeout: float,
) -> bytes:
    length = response.getheader("Content-Length")
    if length and length.isdigit() and int(length) > MAX_BYTES:
        raise ToolError(f"the response is {length} bytes; webfetch takes at most {MAX_BYTES}.")
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if connection.sock is not None:
            connection.sock.settimeout(left)
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BYTES:
            raise ToolError(f"the response is larger than {MAX_BYTES} bytes; not fetched whole.")
        chunks.append(chunk)


def _render(body: bytes, headers: Any, fmt: str, url: str, limit: int) -> str:
    kind = headers.get_content_type()
    text = body.decode(headers.get_content_charset() or "utf-8", "replace")
    if kind in HTML_TYPES:
        if fmt == "markdown":
            text = _markdown(text)
        elif fmt == "text":
            text = _plain(text)
    elif not (kind.startswith("text/") or kind.endswith(TEXT_TYPES)):
        raise ToolError(f"{url} is {kind}, not text; webfetch returns text only.")
    if len(text) > limit:
        return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown]"
    return text


def _markdown(html: str) -> str:
    try:
        from markdownify import markdownify
    except ImportError:
        raise ToolError(
            "webfetch cannot make markdown here: the optional extra is missing (pip install "
            "'toolnexus-runtime[webfetch]'). Ask for format 'text' or 'html' instead."
        ) from None
    return str(markdownify(html, heading_style="ATX")).strip() + "\n"


class _Text(HTMLParser):
    """The text of an HTML page, paragraphs on their own lines; scripts and styles left out."""

    SKIP = frozenset({"script", "style", "noscript", "template", "head"})
    BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"}
        | {"header", "footer", "blockquote", "pre", "table", "ul", "ol", "title", "hr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def _plain(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line) + "\n"
