"""The to-do service todo.openapi.yaml describes, small enough to read: in memory, on 127.0.0.1,
bearer token required. `start(token)` serves it on a free port and returns its base URL."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class Todos:
    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        self.lock = threading.Lock()


def _handler(todos: Todos, token: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _send(self, status: int, body: Any = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _route(self) -> tuple[list[str], dict[str, list[str]], Any] | None:
            if self.headers.get("Authorization") != f"Bearer {token}":
                self._send(401, {"error": "a valid bearer token is required"})
                return None
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            return url.path.strip("/").split("/"), parse_qs(url.query), body

        def do_GET(self) -> None:
            routed = self._route()
            if routed is None:
                return
            parts, query, _ = routed
            if parts != ["api", "todos"]:
                return self._send(404, {"error": "not found"})
            items = sorted(todos.items.values(), key=lambda t: -t["id"])
            if "done" in query:
                items = [t for t in items if t["done"] == (query["done"][0] == "true")]
            limit = int(query.get("limit", ["20"])[0])
            self._send(200, {"items": items[:limit]})

        def do_POST(self) -> None:
            routed = self._route()
            if routed is None:
                return
            parts, _, body = routed
            if parts != ["api", "todos"] or not isinstance(body, dict) or not body.get("title"):
                return self._send(400, {"error": "POST /api/todos with a title"})
            with todos.lock:
                item = {"id": todos.next_id, "title": body["title"], "done": False}
                item["due"] = body.get("due")
                todos.items[item["id"]] = item
                todos.next_id += 1
            self._send(201, item)

        def do_PATCH(self) -> None:
            routed = self._route()
            if routed is None:
                return
            parts, _, body = routed
            item = self._item(parts)
            if item is None:
                return self._send(404, {"error": f"no to-do {parts[-1]}"})
            item.update({k: v for k, v in (body or {}).items() if k in ("title", "done", "due")})
            self._send(200, item)

        def do_DELETE(self) -> None:
            routed = self._route()
            if routed is None:
                return
            item = self._item(routed[0])
            if item is None:
                return self._send(404, {"error": "no such to-do"})
            del todos.items[item["id"]]
            self._send(204)

        def _item(self, parts: list[str]) -> dict[str, Any] | None:
            if len(parts) != 3 or parts[:2] != ["api", "todos"] or not parts[2].isdigit():
                return None
            return todos.items.get(int(parts[2]))

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def start(token: str) -> tuple[str, Todos, ThreadingHTTPServer]:
    todos = Todos()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(todos, token))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}/api", todos, server
