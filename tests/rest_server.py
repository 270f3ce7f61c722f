"""A real HTTP server on 127.0.0.1 that records every request it receives (method, raw target,
path, query, headers, body, the client's port) and answers from routes a test sets; shared by
the REST tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


@dataclass
class Seen:
    method: str
    target: str  # the request target exactly as sent (percent-encoding kept)
    headers: dict[str, str]
    body: bytes
    port: int  # the client's port: the same one for reused connections
    fields: list[tuple[str, str]] = field(default_factory=list)  # every header line, in order

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(urlsplit(self.target).query, keep_blank_values=True)

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def form(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode(), keep_blank_values=True)


@dataclass
class Answer:
    status: int = 200
    body: Any = None  # bytes, text, or JSON data
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    pace: float = 0.0  # seconds between the body's bytes (a server that trickles)


Route = Callable[[Seen], Answer]


class Recorder:
    """Routes: {(METHOD, path): Answer or fn(Seen) -> Answer}; anything else answers 404 with
    a JSON body naming what was asked."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.routes: dict[tuple[str, str], Answer | Route] = {}
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_port}"

    def route(self, method: str, path: str, answer: Answer | Route) -> None:
        self.routes[(method, path)] = answer

    def answer(self, seen: Seen) -> Answer:
        found = self.routes.get((seen.method, seen.path))
        if found is None:
            return Answer(404, {"error": f"no route {seen.method} {seen.path}"})
        return found(seen) if callable(found) else found


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: a reused client connection is visible
        disable_nagle_algorithm = True  # no delayed-ACK wait per response

        def handle_one(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            seen = Seen(
                self.command,
                self.path,
                dict(self.headers.items()),
                body,
                self.client_address[1],
                list(self.headers.items()),
            )
            recorder.seen.append(seen)
            answer = recorder.answer(seen)
            if answer.delay:
                time.sleep(answer.delay)
            payload = answer.body
            headers = dict(answer.headers)
            if isinstance(payload, (dict, list)):
                payload = json.dumps(payload).encode()
                headers.setdefault("Content-Type", "application/json")
            elif isinstance(payload, str):
                payload = payload.encode()
                headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            payload = payload or b""
            self.send_response(answer.status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            try:
                if answer.pace:
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                        time.sleep(answer.pace)
                else:
                    self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                pass

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_one

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serving(recorder: Recorder | None = None) -> Iterator[Recorder]:
    recorder = recorder or Recorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorder))
    server.daemon_threads = True
    recorder.server = server
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()


def decoded(target: str) -> str:
    return unquote(urlsplit(target).path)
