"""webfetch: one http(s) GET, refusing what a model should not reach from here.

- Only http and https; no credentials in the URL.
- With `fetch_allow` only its hosts are fetched. Otherwise every address the host resolves to
  must be a public one: loopback, private, link-local (cloud metadata at 169.254.169.254),
  shared, reserved and multicast addresses are refused unless the host is in `fetch_allow`.
- The connection goes to the address that was checked (never a second lookup), so a name that
  resolves differently a moment later (DNS rebinding) cannot slip through; TLS still verifies
  the certificate against the host name. Each redirect is checked the same way.
- At most MAX_BYTES of body, within the timeout as a whole (name resolution, connecting,
  redirects, interim responses and reading): at the timeout the call ends and its socket is shut
  down, so a server that sends one byte at a time, or `100 Continue` forever, holds nothing.
  The blocking work runs in a thread of its own (worker.py), never the shared executor.
- HTML becomes markdown through markdownify (the optional extra `toolnexus-runtime[webfetch]`),
  or plain text through the standard library's HTML parser, in a child process killed at
  RENDER_SECONDS (pages.py says why).

Proxies from the environment are not used: a proxy would make the address check meaningless.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import ipaddress
import json
import os
import socket
import ssl
import sys
import threading
import time
from collections.abc import Collection
from contextlib import suppress
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from ..datatypes import ToolError
from . import pages
from .worker import in_thread

MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
MAX_INTERIM = 10  # 100 Continue responses before the real one, at most
DEFAULT_TIMEOUT = 30.0
RENDER_SECONDS = 20.0  # converting a page to markdown or text, at most
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


async def webfetch(
    args: dict[str, Any], allow: frozenset[str] | None, limit: int, workspace: str
) -> str:
    """One fetch; `workspace` (the folder the file tools write) is kept off the converter's
    import path, so a module written there is never imported."""
    fmt = args.get("format") or "markdown"
    timeout = float(args.get("timeout") or DEFAULT_TIMEOUT)
    first = args["url"]
    fetch = _Fetch(allow, timeout, fmt)
    try:
        body, headers, url = await asyncio.wait_for(
            in_thread(lambda stop: fetch.run(first), on_cancel=fetch.abort), timeout
        )
    except asyncio.TimeoutError:  # noqa: UP041 (distinct on 3.10)
        raise ToolError(f"fetching {first} took longer than the timeout ({timeout:g} s).") from None
    kind, text = await in_thread(lambda stop: _decode(body, headers, url))
    if kind in HTML_TYPES and fmt in ("markdown", "text"):
        text = await _convert(text, fmt, workspace)
    if len(text) > limit:
        return f"{text[:limit]}\n\n[output cut: {limit} of {len(text)} characters shown]"
    return text


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
    """Whether an address is a public (globally reachable) one. An IPv6 address that carries an
    IPv4 one (mapped, translated, NAT64, 6to4) is judged by that IPv4 address; IPv4-compatible
    (::a.b.c.d, deprecated), site-local (fec0::/10) and other reserved ones are refused."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded(ip)
        if inner is not None:
            return is_public(str(inner))
        if ip.is_site_local or ip.is_reserved or ip.teredo is not None:
            return False
    return ip.is_global and not ip.is_multicast


_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT (RFC 7915)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known NAT64 prefix (RFC 6052)


def _embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to, for the forms that embed one."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _TRANSLATED or ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


class _Response(http.client.HTTPResponse):
    """http.client skips `100 Continue` responses in a loop without end; this one counts them."""

    interim = 0

    def _read_status(self) -> tuple[str, int, str]:
        version, status, reason = super()._read_status()  # type: ignore[misc]
        if status == http.client.CONTINUE:
            self.interim += 1
            if self.interim > MAX_INTERIM:
                raise http.client.HTTPException(
                    f"the server sent more than {MAX_INTERIM} interim (100 Continue) responses"
                )
        return version, status, reason


class _HTTP(http.client.HTTPConnection):
    """Talks to `host` (its Host header) at the address `ip` that was checked; its socket is
    watched by the fetch, which shuts it down at the timeout."""

    response_class = _Response

    def __init__(self, host: str, port: int, ip: str, timeout: float, fetch: _Fetch) -> None:
        super().__init__(host, port, timeout=timeout)
        self.ip = ip
        self.fetch = fetch

    def connect(self) -> None:
        self.sock = self.fetch.watch(socket.create_connection((self.ip, self.port), self.timeout))


class _HTTPS(http.client.HTTPSConnection):
    response_class = _Response

    def __init__(self, host: str, port: int, ip: str, timeout: float, fetch: _Fetch) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self.tls)
        self.ip = ip
        self.fetch = fetch

    def connect(self) -> None:
        sock = self.fetch.watch(socket.create_connection((self.ip, self.port), self.timeout))
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)


class _Fetch:
    """One webfetch: its requests (redirects followed) in a worker thread, within one deadline.
    `abort` (from the event loop, at the timeout) shuts down the connection's socket, so a read
    blocked in the worker returns at once instead of waiting on a slow server."""

    def __init__(self, allow: frozenset[str] | None, timeout: float, fmt: str) -> None:
        self.allow = allow
        self.timeout = timeout
        self.fmt = fmt
        self.deadline = time.monotonic() + timeout
        self._lock = threading.Lock()
        self._watched: list[socket.socket] = []  # duplicates of the open sockets
        self._aborted = False

    def watch(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            if self._aborted:
                sock.close()
                raise TimeoutError("the fetch was stopped")
            self._watched.append(sock.dup())  # ours to shut down, whatever the TLS layer does
        return sock

    def _release(self) -> None:
        with self._lock:
            for sock in self._watched:
                sock.close()
            self._watched.clear()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            for sock in self._watched:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def run(self, url: str) -> tuple[bytes, Any, str]:
        for _ in range(MAX_REDIRECTS + 1):
            scheme, host, port, target = _check(url, self.allow)
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            connection = (_HTTPS if scheme == "https" else _HTTP)(host, port, target, left, self)
            try:
                connection.request(
                    "GET",
                    _target(url),
                    headers={
                        "User-Agent": USER_AGENT,
                        "Accept": _ACCEPT.get(self.fmt, "*/*"),
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
                return self._body(response, connection), response.headers, url
            except (OSError, http.client.HTTPException, ValueError) as exc:
                if isinstance(exc, TimeoutError) or self._late():
                    break
                raise ToolError(f"fetching {url} failed: {exc}") from None
            finally:
                connection.close()
                self._release()
        else:
            raise ToolError(f"more than {MAX_REDIRECTS} redirects from {url}; stopped.")
        raise ToolError(f"fetching {url} took longer than the timeout ({self.timeout:g} s).")

    def _late(self) -> bool:
        return self._aborted or time.monotonic() >= self.deadline

    def _body(
        self, response: http.client.HTTPResponse, connection: http.client.HTTPConnection
    ) -> bytes:
        length = response.getheader("Content-Length")
        if length and length.isdigit() and int(length) > MAX_BYTES:
            raise ToolError(f"the response is {length} bytes; webfetch takes at most {MAX_BYTES}.")
        chunks: list[bytes] = []
        size = 0
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(65536)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_BYTES:
                raise ToolError(
                    f"the response is larger than {MAX_BYTES} bytes; not fetched whole."
                )
            chunks.append(chunk)


def _target(url: str) -> str:
    """The request target of `url`: its path and query, non-ASCII characters percent-encoded."""
    path = urlsplit(url)._replace(scheme="", netloc="", fragment="").geturl() or "/"
    path = path if path.startswith("/") else "/" + path
    return "".join(c if ord(c) < 128 else quote(c) for c in path)


def _check(url: str, allow: frozenset[str] | None) -> tuple[str, str, int, str]:
    """(scheme, host, port, the address to connect to) of a URL this toolkit may fetch."""
    try:
        parts = urlsplit(url.strip())
        hostname, port_text = parts.hostname, parts.port
    except ValueError as exc:
        raise ToolError(f"{url!r} is not a valid URL: {exc}.") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolError(
            f"webfetch takes http and https URLs only, not {scheme + ':' if scheme else url!r}."
        )
    host = (hostname or "").rstrip(".")
    if not host:
        raise ToolError(f"{url!r} names no host.")
    if parts.username is not None or parts.password is not None:
        raise ToolError("URLs with credentials (user:password@) are not fetched.")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ToolError(f"{url!r} has an invalid host name.") from None
    if any(c in host for c in "\x00\r\n\t /\\"):
        raise ToolError(f"{url!r} has an invalid host name.")
    port = port_text or (443 if scheme == "https" else 80)
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


def _decode(body: bytes, headers: Any, url: str) -> tuple[str, str]:
    """(content type, text) of a response; an unknown charset is read as UTF-8."""
    kind = headers.get_content_type()
    if kind not in HTML_TYPES and not (kind.startswith("text/") or kind.endswith(TEXT_TYPES)):
        raise ToolError(f"{url} is {kind}, not text; webfetch returns text only.")
    try:
        return kind, body.decode(headers.get_content_charset() or "utf-8", "replace")
    except LookupError:  # a charset Python does not know (or not a text encoding)
        return kind, body.decode("utf-8", "replace")


def _need_markdownify() -> None:
    """An error result when markdownify is not installed (found, not imported: it is imported
    in the converter's process only)."""
    try:
        found = sys.modules.get("markdownify", True) is not None and bool(
            importlib.util.find_spec("markdownify")
        )
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ToolError(
            "webfetch cannot make markdown here: the optional extra is missing (pip install "
            "'toolnexus-runtime[webfetch]'). Ask for format 'text' or 'html' instead."
        )


async def _convert(html: str, fmt: str, workspace: str) -> str:
    """The page as markdown or text, made in a child process killed at RENDER_SECONDS."""
    if fmt == "markdown":
        _need_markdownify()
    child = None
    if sys.executable and not getattr(sys, "frozen", False):
        with suppress(OSError, NotImplementedError, RuntimeError):
            child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                pages.__file__,
                str(int(RENDER_SECONDS) + 1),  # CPU seconds, a backstop to the kill below
                str(RENDER_SECONDS / 2),  # markdown taking longer is given up for text
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
    if child is None:  # no Python to start (a frozen application): in a thread, unbounded
        return await in_thread(lambda stop: _reply(pages.convert, html, fmt))
    path = [p for p in sys.path if os.path.isabs(p) and not _inside(p, workspace)]
    request = json.dumps({"html": html, "format": fmt, "path": path}).encode()
    try:
        out, _ = await asyncio.wait_for(child.communicate(request), RENDER_SECONDS)
    except asyncio.TimeoutError:  # noqa: UP041 (distinct on 3.10)
        raise ToolError(
            f"converting the page ({len(html)} characters of HTML) to {fmt} took longer than "
            f"{RENDER_SECONDS:g} s and was stopped; ask for format 'html' instead."
        ) from None
    finally:
        if child.returncode is None:
            with suppress(ProcessLookupError):
                child.kill()
            await child.wait()
    try:
        reply = json.loads(out)
    except ValueError:
        raise ToolError(
            f"converting the page ({len(html)} characters of HTML) to {fmt} failed (the "
            "converter was stopped: too much time or memory); ask for format 'html' instead."
        ) from None
    if "error" in reply:
        raise ToolError(f"{reply['error']}; ask for format 'html' instead.")
    return str(reply["text"])


def _inside(path: str, folder: str) -> bool:
    real = os.path.realpath(path)
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def _reply(convert: Any, html: str, fmt: str) -> str:
    try:
        return str(convert(html, fmt))
    except RecursionError:
        raise ToolError("the page nests too deeply to convert; ask for format 'html'.") from None
