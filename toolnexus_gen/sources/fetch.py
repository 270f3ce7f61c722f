"""Fetching a declared OpenAPI document from an https URL: the only network access of `sync`
for OpenAPI sources (`build` never fetches), under the rules the runtime's `webfetch` keeps.

- https only, no credentials in the URL, at most MAX_REDIRECTS redirects, each one https and
  checked again;
- the host's every address must be a public one (no loopback, private, link-local, reserved or
  multicast address, nor an IPv6 form that carries one), checked after name resolution, and the
  connection is made to the address that was checked (no second lookup to rebind);
- at most MAX_BYTES of body (Content-Length, then as it is read), within TIMEOUT seconds as a
  whole: a watchdog shuts the connection down at the deadline, whatever is being read (a
  server that drips a header or a chunk-size line a byte at a time cannot hold sync past it,
  as a timeout per read would let it). A failure is one line (FetchError); nothing is written.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from urllib.parse import quote, urljoin, urlsplit

from toolnexus_gen import __version__

MAX_BYTES = 64 * 1024 * 1024  # GitHub's full description is 13 MB, its dereferenced one more
MAX_REDIRECTS = 5
TIMEOUT = 60.0
USER_AGENT = f"toolnexus-gen/{__version__} (sync)"


class FetchError(Exception):
    """Why a document could not be fetched, in one line."""


def is_public(address: str) -> bool:
    """Whether an address is globally reachable (the runtime's rule, toolnexus_runtime
    builtins/web.py): an IPv6 address carrying an IPv4 one is judged by that one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded(ip)
        if inner is not None:
            return is_public(str(inner))
        if ip.is_site_local or ip.is_reserved or ip.teredo is not None:
            return False
    return ip.is_global and not ip.is_multicast


_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _TRANSLATED or ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def check(url: str) -> tuple[str, int, str]:
    """(host, port, the address to connect to) of a URL sync may fetch; FetchError if not."""
    try:
        parts = urlsplit(url.strip())
        hostname, port = parts.hostname, parts.port
    except ValueError as exc:
        raise FetchError(f"{url!r} is not a valid URL: {exc}") from None
    if parts.scheme.lower() != "https":
        raise FetchError(f"{url!r}: documents are fetched over https only")
    if parts.username is not None or parts.password is not None:
        raise FetchError(f"{url!r}: a URL with credentials (user:password@) is not fetched")
    host = (hostname or "").rstrip(".")
    if not host or any(c in host for c in "\x00\r\n\t /\\"):
        raise FetchError(f"{url!r} names no usable host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise FetchError(f"{url!r} has an invalid host name") from None
    port = port or 443
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise FetchError(f"cannot resolve host {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(sockaddr[0]) for *_, sockaddr in found))
    if not addresses:
        raise FetchError(f"cannot resolve host {host!r}")
    for address in addresses:
        if not is_public(address):
            raise FetchError(
                f"{host} resolves to {address}, a loopback, private, link-local or reserved "
                "address; refused (put the document in the project and name its path instead)"
            )
    return host, port, addresses[0]


class _Pinned(http.client.HTTPSConnection):
    """TLS to `host` (its certificate and SNI) at the address that was checked."""

    def __init__(self, host: str, port: int, ip: str, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(host, port, timeout=timeout, context=self.tls)
        self.ip = ip
        self.expired = False  # the watchdog shut the connection down
        self._lock = threading.Lock()
        self._line: socket.socket | None = None  # a duplicate of the socket, for the watchdog

    def connect(self) -> None:
        sock = self.watched(socket.create_connection((self.ip, self.port), self.timeout))
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)

    def watched(self, sock: socket.socket) -> socket.socket:
        """`sock`, which the watchdog can now shut down (through a duplicate of it: a shutdown
        acts on the connection, whichever descriptor names it, and under TLS too)."""
        with self._lock:
            self._line = sock.dup()
            if self.expired:
                self._line.shutdown(socket.SHUT_RDWR)
        return sock

    def expire(self) -> None:
        """The deadline: whatever the connection is waiting for ends now."""
        with self._lock:
            self.expired = True
            if self._line is not None:
                try:
                    self._line.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed

    def close(self) -> None:
        super().close()
        with self._lock:
            if self._line is not None:
                self._line.close()
                self._line = None


def fetch(url: str, timeout: float = TIMEOUT) -> bytes:
    """The body of `url` (redirects followed under the same rules)."""
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        host, port, ip = check(url)
        left = deadline - time.monotonic()
        if left <= 0:
            break
        connection = _Pinned(host, port, ip, left)
        watchdog = threading.Timer(left, connection.expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            connection.request(
                "GET",
                _target(url),
                headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
            )
            response = connection.getresponse()
            location = response.getheader("Location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = urljoin(url, location)
                continue
            if not 200 <= response.status < 300:
                raise FetchError(f"HTTP {response.status} {response.reason} from {url}")
            body = _body(response, connection, deadline, url)
            if connection.expired:  # cut short at the deadline, not the whole document
                break
            return body
        except TimeoutError:
            break
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if connection.expired:
                break
            raise FetchError(f"fetching {url} failed: {exc}") from None
        finally:
            watchdog.cancel()
            connection.close()
    else:
        raise FetchError(f"more than {MAX_REDIRECTS} redirects from {url}; stopped")
    raise FetchError(f"fetching {url} took longer than {timeout:g} s")


def _body(
    response: http.client.HTTPResponse,
    connection: http.client.HTTPConnection,
    deadline: float,
    url: str,
) -> bytes:
    length = response.getheader("Content-Length")
    if length and length.isdigit() and int(length) > MAX_BYTES:
        raise FetchError(f"{url} is {length} bytes; a document may have at most {MAX_BYTES}")
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        if connection.sock is not None:
            connection.sock.settimeout(left)
        chunk = response.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BYTES:
            raise FetchError(f"{url} is larger than {MAX_BYTES} bytes; not fetched whole")
        chunks.append(chunk)


def _target(url: str) -> str:
    path = urlsplit(url)._replace(scheme="", netloc="", fragment="").geturl() or "/"
    path = path if path.startswith("/") else "/" + path
    return "".join(c if ord(c) < 128 else quote(c) for c in path)
