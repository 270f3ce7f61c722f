"""The thin Chat Completions client (toolnexus_runtime.openai_compatible), an option beside the
official SDK, against a real HTTP/1.1 server on 127.0.0.1 with keep-alive: whole tool loops,
retries, error statuses, and a keep-alive connection the server closed while idle."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import ROOT, WEATHER, build_in
from toolnexus_runtime.openai_compatible import APIError, AsyncClient, Client

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

FINAL = "It is 21C and clear in Chennai."
SCRIPT: list[scripted.Turn] = [[("c1", "get_weather", {"city": "Chennai"})], FINAL]


class Server(ThreadingHTTPServer):
    """Answers each POST with the next (status, headers, body) and records what it was sent."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.answers: list[tuple[int, dict[str, str], Any]] = []
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.connections = 0
        self.close_after_answer = False
        self.drop_after_reading = False
        self.closed = threading.Event()  # set each time the server closes a connection
        self.drip: float | None = None  # seconds between the body's bytes (a slow-drip server)
        self.cut: int | None = None  # bytes of the next body sent before the server goes away

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed.set()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def script(self, turns: list[scripted.Turn]) -> None:
        self.answers += [(200, {}, scripted.openai_chat(turn)) for turn in turns]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server: Server

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections += 1

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, dict(self.headers), body))
        if self.server.drop_after_reading:  # handled it, then went away without an answer
            self.close_connection = True
            return
        status, headers, answer = self.server.answers.pop(0)
        data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.server.cut is not None:  # the server went away in the middle of the body
            self.wfile.write(data[: self.server.cut])
            self.server.cut = None
            self.close_connection = True
        elif self.server.drip is None:
            self.wfile.write(data)
        else:
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(self.server.drip)
            except OSError:  # the client gave up on it
                self.close_connection = True
        if self.server.close_after_answer:  # as a server whose keep-alive timeout ran out
            self.close_connection = True


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def tk(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pkg = build_in(tmp_path_factory.mktemp("thin"), WEATHER)

    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        def get_weather(self, args: Any, ctx: Any) -> str:
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            return "12:00"

    return pkg.Toolkit(Handlers())


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_whole_loop_on_one_keep_alive_connection(
    server: Server, tk: Any, asynchronous: bool
) -> None:
    server.script(SCRIPT)
    if asynchronous:
        client: Any = AsyncClient(base_url=server.base_url, api_key="sk-test")
        run = asyncio.run(
            tk.arun_openai(client, model="m", messages="Weather in Chennai?", temperature=0.2)
        )
    else:
        client = Client(base_url=server.base_url, api_key="sk-test")
        run = tk.run_openai(client, model="m", messages="Weather in Chennai?", temperature=0.2)
    assert run.response["choices"][0]["message"]["content"] == FINAL
    assert [(c.name, r.output) for c, r in run.tool_calls] == [
        ("get_weather", "Chennai: 21C, clear")
    ]
    assert server.connections == 1
    paths = {path for path, _, _ in server.requests}
    assert paths == {"/v1/chat/completions"}
    _, headers, last = server.requests[-1]
    assert headers["Authorization"] == "Bearer sk-test"
    assert last["temperature"] == 0.2 and last["model"] == "m"
    assert [t["function"]["name"] for t in last["tools"]] == ["get_weather", "now"]
    assert [m["role"] for m in last["messages"]] == ["user", "assistant", "tool"]
    assert last["messages"][2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Chennai: 21C, clear",
    }


def test_extra_body_and_headers_go_as_the_official_client_sends_them(server: Server) -> None:
    server.script(["ok"])
    client = Client(base_url=server.base_url, api_key="k", headers={"OpenAI-Project": "p1"})
    client.chat.completions.create(
        model="m",
        messages=[],
        extra_body={"messages": [{"role": "user", "content": "hi"}], "seed": 3},
        extra_headers={"X-Trace": "t1"},
    )
    _, headers, body = server.requests[0]
    assert body == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 3}
    assert headers["OpenAI-Project"] == "p1" and headers["X-Trace"] == "t1"


def test_retries_then_error_statuses(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k")
    server.answers += [(429, {"Retry-After": "0"}, {"error": {"message": "slow down"}})]
    server.script(["ok"])
    assert client.chat.completions.create(model="m", messages=[])["choices"]
    assert len(server.requests) == 2  # the 429 was retried

    server.answers += [(400, {}, {"error": {"message": "messages: required"}})]
    with pytest.raises(APIError, match="400: messages: required") as caught:
        client.chat.completions.create(model="m", messages=[])
    assert caught.value.status == 400  # not retried
    assert len(server.requests) == 3

    once = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.answers += [(503, {}, {"error": {"message": "overloaded"}})]
    with pytest.raises(APIError, match="503: overloaded"):
        once.chat.completions.create(model="m", messages=[])


def test_a_success_status_without_json_is_an_api_error(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.answers += [(200, {}, b"<html>captive portal</html>")]
    with pytest.raises(APIError, match="200: .*not JSON.*captive portal") as caught:
        client.chat.completions.create(model="m", messages=[])
    assert caught.value.status == 200


def test_a_connection_the_server_closed_is_opened_again(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.close_after_answer = True
    server.script(["one", "two"])
    first = client.chat.completions.create(model="m", messages=[])
    # as a keep-alive timeout would: the server has closed the connection before the next request
    assert server.closed.wait(10)
    second = client.chat.completions.create(model="m", messages=[])
    assert [r["choices"][0]["message"]["content"] for r in (first, second)] == ["one", "two"]
    assert server.connections == 2


def test_base_url_and_key_default_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    client = Client()
    assert client._path == "/v1/chat/completions"
    assert client._headers["Authorization"] == "Bearer from-env"
    with pytest.raises(ValueError, match="http"):
        Client(base_url="ftp://example.invalid")


def test_requests_from_several_threads_share_the_idle_connection(server: Server) -> None:
    # asyncio.to_thread may run each request on another worker thread: still one connection.
    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.script(["one", "two", "three"])
    for _ in range(2):
        thread = threading.Thread(target=client.chat.completions.create, kwargs={"model": "m"})
        thread.start()
        thread.join()
    assert server.connections == 1
    client.close()  # the idle connection is closed: the next request opens another
    client.chat.completions.create(model="m", messages=[])
    assert server.connections == 2


def test_a_request_the_server_may_have_handled_is_not_sent_again_beyond_max_retries(
    server: Server,
) -> None:
    # The server read the request on a reused connection, then closed it without an answer:
    # it may have acted on it, so with max_retries=0 it is not sent a second time.
    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.script(["one"])
    client.chat.completions.create(model="m", messages=[])
    server.drop_after_reading = True
    with pytest.raises(ConnectionError):
        client.chat.completions.create(model="m", messages=[])
    assert len(server.requests) == 2


def test_a_hostile_retry_after_falls_back_to_the_backoff(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k")
    for value in ("-5", "nan"):  # time.sleep refuses both
        server.answers += [(429, {"Retry-After": value}, {"error": {"message": "slow"}})]
    server.script(["ok"])
    assert client.chat.completions.create(model="m", messages=[])["choices"]
    assert len(server.requests) == 3


def test_a_connection_on_a_descriptor_past_1024_is_reused(server: Server) -> None:
    # A busy process (a server with many sockets) has descriptors past select()'s FD_SETSIZE.
    import os

    client = Client(base_url=server.base_url, api_key="k", max_retries=0)
    server.script(["one", "two"])
    spare = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        client.chat.completions.create(model="m", messages=[])
        assert client._idle[0].sock.fileno() > 1024
        second = client.chat.completions.create(model="m", messages=[])
    finally:
        client.close()
        for fd in spare:
            os.close(fd)
    assert second["choices"][0]["message"]["content"] == "two"
    assert server.connections == 1


def test_a_key_with_a_line_break_is_refused_without_showing_it(server: Server) -> None:
    # http.client would refuse the header at request time with the whole value (the key) in
    # its message, which ends up in logs.
    with pytest.raises(ValueError, match="api_key") as caught:
        Client(base_url=server.base_url, api_key="sk-secret\r\nX-Evil: 1")
    assert "sk-secret" not in str(caught.value)
    assert not server.requests


def test_an_ipv6_host_without_a_port_keeps_its_address(monkeypatch: pytest.MonkeyPatch) -> None:
    import http.client

    reached: list[tuple[str, int]] = []

    def connect(self: http.client.HTTPConnection) -> None:
        reached.append((self.host, self.port))
        raise ConnectionRefusedError

    monkeypatch.setattr(http.client.HTTPConnection, "connect", connect)
    client = Client(base_url="http://[::1]/v1", api_key="k", max_retries=0)
    with pytest.raises(ConnectionRefusedError):
        client.chat.completions.create(model="m", messages=[])
    assert reached == [("::1", 80)]  # not host "::", port 1


def test_an_answer_over_max_response_bytes_is_an_error_read_no_further(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k", max_retries=0, max_response_bytes=1000)
    server.answers.append((200, {}, {"padding": "x" * 5000}))
    server.script(["after"])
    with pytest.raises(APIError, match="max_response_bytes=1000") as caught:
        client.chat.completions.create(model="m", messages=[])
    assert caught.value.status == 413
    # the connection with the rest of that answer on it is not reused
    answer = client.chat.completions.create(model="m", messages=[])
    assert answer["choices"][0]["message"]["content"] == "after"
    assert server.connections == 2


def test_a_slow_drip_answer_cannot_hold_the_call_past_its_timeout(server: Server) -> None:
    client = Client(base_url=server.base_url, api_key="k", max_retries=0, timeout=0.5)
    server.drip = 0.05  # each read gets a byte well within the timeout; the answer never ends
    server.answers.append((200, {}, {"padding": "x" * 400}))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        client.chat.completions.create(model="m", messages=[])
    assert time.monotonic() - started < 3  # not 400 bytes x 0.05 s = 20 s


def test_an_answer_cut_short_by_the_server_is_a_lost_connection_not_an_answer(
    server: Server,
) -> None:
    # Content-Length says more than came before the server closed the connection: the answer
    # is incomplete (retried as a lost connection is), not a JSON error to give up on.
    client = Client(base_url=server.base_url, api_key="k", max_retries=1)
    server.script(["whole"])
    server.answers.append(server.answers[0])
    server.cut = 40
    answer = client.chat.completions.create(model="m", messages=[])
    assert answer["choices"][0]["message"]["content"] == "whole"
    assert len(server.requests) == 2
    server.script(["cut"])
    server.cut = 40
    once = Client(base_url=server.base_url, api_key="k", max_retries=0)
    with pytest.raises(http.client.IncompleteRead):
        once.chat.completions.create(model="m", messages=[])


def test_a_key_in_clear_to_another_machine_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        for url in ("https://api.example.com/v1", "http://127.0.0.1:8000/v1", "http://[::1]/v1"):
            Client(base_url=url, api_key="sk-secret")
        Client(base_url="http://localhost:8000/v1", api_key="sk-secret")
        Client(base_url="http://10.0.0.7:8000/v1")  # no key: nothing to read
        assert caplog.records == []
        Client(base_url="http://10.0.0.7:8000/v1", api_key="sk-secret")
    [record] = caplog.records
    assert "plain http://" in record.getMessage() and "10.0.0.7" in record.getMessage()
    assert "sk-secret" not in record.getMessage()


def test_a_key_in_headers_in_clear_is_a_warning_and_this_machines_names_are_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        for url in ("http://localhost.:8000/v1", "http://[::ffff:127.0.0.1]:8000/v1"):
            Client(base_url=url, api_key="sk-secret")
        Client(base_url="http://10.0.0.7/v1", headers={"X-Trace": "t1"})  # no key in them
        assert caplog.records == []
        Client(base_url="http://10.0.0.7/v1", headers={"api-key": "sk-secret"})  # Azure's
        Client(base_url="http://10.0.0.8/v1", headers={"Authorization": "Bearer sk-secret"})
    assert ["10.0.0.7" in r.getMessage() for r in caplog.records] == [True, False]
    assert all("plain http://" in r.getMessage() for r in caplog.records)
    assert all("sk-secret" not in r.getMessage() for r in caplog.records)
