"""REST APIs as tools: a spec's `http` key becomes the tool's binding, checked at build time, and
the runtime sends the request (httpx) to a real server on 127.0.0.1 that records what it gets:
path, query, body and headers exactly; statuses; timeouts; redirects; secrets never echoed."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import build_in, cli, write_specs
from rest_server import Answer, Recorder, serving
from toolnexus_runtime import ToolContext, run_sync

DUMMY = "http://127.0.0.1:9"  # the build-time base_url; every test gives the real one
TOKEN = "REST_TEST_TOKEN"
SECRET = "s3cr3t-value-that-must-not-leak"


def rest(url: str, schema: dict[str, Any] | None = None, **http: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "description": f"REST tool for {url}",
        "http": {"url": url, "base_url": DUMMY, **http},
    }
    if schema is not None:
        spec["input_schema"] = schema
    return spec


def obj(required: list[str] | None = None, **properties: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

SPECS = {
    "get_item.yaml": rest(
        "/items/{item_id}?fixed=yes&amp=%26",
        obj(
            ["item_id"],
            item_id=STR,
            limit=INT,
            tags={"type": "array", "items": STR},
            flag=BOOL,
            filter={"type": "object"},
            note={"type": ["string", "null"]},
            trace=STR,
        ),
        headers={
            "Authorization": f"Bearer ${{{TOKEN}}}",
            "X-Trace": "{trace}",
            "Accept": "application/json",
        },
    ),
    "get_file.yaml": rest("/files/{name}/raw", obj(["name"], name=STR)),
    "create_item.yaml": rest(
        "/groups/{group}/items",
        obj(
            ["group", "name"],
            group=INT,
            dry_run=BOOL,
            name=STR,
            size=INT,
            labels={"type": "object"},
        ),
        method="post",
        query=["dry_run"],
    ),
    "submit_form.yaml": rest(
        "/forms",
        obj(["a"], a=STR, n=INT, many={"type": "array", "items": STR}, on=BOOL),
        method="POST",
        body="form",
    ),
    "put_list.yaml": rest(
        "/lists/{list_id}",
        obj(["list_id", "items"], list_id=INT, items={"type": "array", "items": INT}, mode=STR),
        method="PUT",
        body_arg="items",
    ),
    "delete_item.yaml": rest(
        "/items/{item_id}", obj(["item_id"], item_id=INT, force=BOOL), method="DELETE"
    ),
    "ping.yaml": rest("/ping", method="POST"),
    "fetch.yaml": rest("/data/{kind}", obj(["kind"], kind=STR)),
    "fetch_text.yaml": rest("/data/{kind}", obj(["kind"], kind=STR), result="text"),
    "fetch_json.yaml": rest("/data/{kind}", obj(["kind"], kind=STR), result="json"),
    "slow.yaml": rest("/slow", timeout=0.3),
    "status.yaml": rest("/status/{code}", obj(["code"], code=INT)),
    "hop.yaml": rest("/hop/{to}", obj(["to"], to=STR), method="POST"),
    "echo.yaml": rest(
        "/echo", headers={"Authorization": f"Bearer ${{{TOKEN}}}", "X-Api-Key": f"${{{TOKEN}}}"}
    ),
    "deny.yaml": rest("/deny", headers={"Authorization": f"Bearer ${{{TOKEN}}}"}),
    "cookie.yaml": rest(
        "/cookie", obj([], lang=STR), headers={"Cookie": f"sid=${{{TOKEN}}}; lang={{lang}}"}
    ),
}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    # free-form objects and [T, null] are for targets that take them (Gemini's need reach)
    targets = ("--target", "openai", "--target", "anthropic", "--target", "mcp")
    return build_in(tmp_path_factory.mktemp("rest"), SPECS, *targets)


@pytest.fixture
def server() -> Any:
    with serving() as recorder:
        yield recorder


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(TOKEN, SECRET)
    return SECRET


def toolkit(pkg: Any, server: Recorder, **options: Any) -> Any:
    return pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url, **options)


def test_rest_tools_need_no_handler_and_carry_their_binding(pkg: Any) -> None:
    assert not hasattr(pkg.ToolHandlers, "get_item")
    binding = pkg.TOOLS["create_item"].binding["http"]
    assert binding == {
        "base_url": DUMMY,
        "body": "json",
        "method": "POST",
        "query": ["dry_run"],
        "url": "/groups/{group}/items",
    }
    assert pkg.TOOLS["get_item"].binding["http"]["body"] == "none"  # GET: arguments to the query


def test_path_query_and_headers_exactly(pkg: Any, server: Recorder, secret: str) -> None:
    server.route("GET", "/items/a%20b%3Ac", Answer(200, {"ok": True}))  # raw paths
    tk = toolkit(pkg, server)
    args = {
        "item_id": "a b:c",
        "limit": 5,
        "tags": ["x", "y z"],
        "flag": False,
        "filter": {"k": [1, 2]},
        "note": None,
        "trace": "t-1",
    }
    result = tk.execute_sync("get_item", args)
    assert (result.is_error, result.data) == (False, {"ok": True}), result.output
    (seen,) = server.seen
    assert seen.method == "GET"
    assert seen.target == (
        "/items/a%20b%3Ac?fixed=yes&amp=%26&limit=5&tags=x&tags=y%20z&flag=false"
        "&filter=%7B%22k%22%3A%5B1%2C2%5D%7D"
    )  # the URL's own query first; lists repeat; objects as JSON; a null is left out
    assert seen.headers["Authorization"] == f"Bearer {secret}"
    assert seen.headers["X-Trace"] == "t-1"
    assert seen.headers["Accept"] == "application/json"
    assert seen.body == b""
    # an absent optional header argument leaves its header out
    tk.execute_sync("get_item", {"item_id": "1"})
    assert "X-Trace" not in server.seen[-1].headers
    assert server.seen[-1].target == "/items/1?fixed=yes&amp=%26"
    tk.close()


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("x?y=1", "/files/x%3Fy%3D1/raw"),
        ("#frag", "/files/%23frag/raw"),
        ("100%", "/files/100%25/raw"),
        ("a b", "/files/a%20b/raw"),
        ("...", "/files/.../raw"),
        ("ünï", "/files/%C3%BCn%C3%AF/raw"),
    ],
)
def test_a_placeholder_value_never_changes_the_path(
    pkg: Any, server: Recorder, value: str, target: str
) -> None:
    tk = toolkit(pkg, server)
    tk.execute_sync("get_file", {"name": value})
    assert server.seen[-1].target == target
    tk.close()


@pytest.mark.parametrize(
    "value",
    [
        "",  # DELETE /items/{id} would become DELETE /items/
        ".",
        "..",
        "../admin",
        "a/b",
        "a\\b",
        "..%2F..",  # a proxy that decodes the path would walk it
        "%2e%2E",
        "%252e%252e",  # decoded twice
        "%2F",
        "%5C",
        "..;",  # Tomcat reads ..; as ..
        "a\x00b",
    ],
)
def test_a_path_value_that_would_walk_the_path_is_refused_before_sending(
    pkg: Any, server: Recorder, value: str
) -> None:
    # behind a proxy that decodes and normalises (nginx proxy_pass with a URI), an encoded
    # ../../admin reached another endpoint with the tool's credentials
    tk = toolkit(pkg, server)
    result = tk.execute_sync("get_file", {"name": value})
    assert result.is_error and result.error_type == "invalid_arguments", result.output
    assert result.output.startswith("Invalid arguments for tool 'get_file': name: a path value")
    assert result.problems[0][0] == ("name",)
    assert server.seen == []
    tk.close()


def test_post_sends_the_other_arguments_as_json_and_query_lists_force_the_query(
    pkg: Any, server: Recorder
) -> None:
    server.route("POST", "/groups/7/items", Answer(201, {"id": 1}))
    tk = toolkit(pkg, server)
    args = {"group": 7, "dry_run": True, "name": "n", "size": 3, "labels": {"a": "b"}}
    assert tk.execute_sync("create_item", args).data == {"id": 1}
    seen = server.seen[-1]
    assert (seen.method, seen.target) == ("POST", "/groups/7/items?dry_run=true")
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.json == {"name": "n", "size": 3, "labels": {"a": "b"}}
    tk.execute_sync("ping", {})  # a POST without arguments sends an empty JSON object
    assert (server.seen[-1].target, server.seen[-1].json) == ("/ping", {})
    tk.close()


def test_form_and_body_arg_bodies(pkg: Any, server: Recorder) -> None:
    tk = toolkit(pkg, server)
    tk.execute_sync("submit_form", {"a": "x y&z", "n": 2, "many": ["p", "q"], "on": True})
    seen = server.seen[-1]
    assert seen.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert seen.form == [("a", "x y&z"), ("n", "2"), ("many", "p"), ("many", "q"), ("on", "true")]
    tk.execute_sync("put_list", {"list_id": 3, "items": [1, 2], "mode": "append"})
    seen = server.seen[-1]
    assert (seen.method, seen.target, seen.json) == ("PUT", "/lists/3?mode=append", [1, 2])
    tk.execute_sync("delete_item", {"item_id": 4, "force": True})
    seen = server.seen[-1]
    assert (seen.method, seen.target, seen.body) == ("DELETE", "/items/4?force=true", b"")
    tk.close()


def test_bodies_come_back_as_data_or_text(pkg: Any, server: Recorder) -> None:
    server.route("GET", "/data/json", Answer(200, {"a": [1, 2]}))
    server.route("GET", "/data/text", Answer(200, "plain words"))
    server.route(
        "GET", "/data/vnd", Answer(200, b'{"v": 1}', {"Content-Type": "application/vnd.x+json"})
    )
    server.route("GET", "/data/empty", Answer(204, b""))
    tk = toolkit(pkg, server)
    assert tk.execute_sync("fetch", {"kind": "json"}).data == {"a": [1, 2]}
    assert tk.execute_sync("fetch", {"kind": "vnd"}).data == {"v": 1}
    text = tk.execute_sync("fetch", {"kind": "text"})
    assert (text.output, text.data, text.is_error) == ("plain words", None, False)
    assert tk.execute_sync("fetch", {"kind": "empty"}).output == "HTTP 204: no content"
    assert tk.execute_sync("fetch_text", {"kind": "json"}).output == '{"a": [1, 2]}'
    forced = tk.execute_sync("fetch_json", {"kind": "text"})
    assert forced.is_error and forced.output.startswith("HTTP 200: the body is not JSON")
    tk.close()


def test_a_non_2xx_status_is_an_error_result_with_the_body_capped(
    pkg: Any, server: Recorder
) -> None:
    server.route("GET", "/status/404", Answer(404, {"detail": "no such thing"}))
    server.route("GET", "/status/500", Answer(500, "x" * 5000))
    server.route("GET", "/status/503", Answer(503, b""))
    tk = toolkit(pkg, server)
    missing = tk.execute_sync("status", {"code": 404})
    assert (missing.is_error, missing.output) == (True, 'HTTP 404: {"detail": "no such thing"}')
    assert missing.error_type == "HttpStatusError"
    long = tk.execute_sync("status", {"code": 500})
    assert long.output == "HTTP 500: " + "x" * 2000 + "... (3000 more characters)"
    assert tk.execute_sync("status", {"code": 503}).output == "HTTP 503: Service Unavailable"
    tk.close()


def test_timeouts_and_connection_failures_are_error_results(pkg: Any, server: Recorder) -> None:
    server.route("GET", "/slow", Answer(200, "late", delay=1.0))
    tk = toolkit(pkg, server)
    slow = tk.execute_sync("slow", {})
    assert slow.is_error and slow.error_type == "HttpTimeout"
    assert slow.output.startswith(f"Tool 'slow': no answer from {server.url} within 0.3 s")
    tk.close()
    closed = pkg.Toolkit(pkg.ToolHandlers(), base_url="http://127.0.0.1:9")  # nothing listens
    down = closed.execute_sync("fetch", {"kind": "x"})
    assert down.is_error and down.error_type == "HttpUnreachable"
    assert down.output.startswith("Tool 'fetch': cannot reach http://127.0.0.1:9: ConnectError")
    closed.close()


def test_redirects_are_followed_within_the_origin_only(
    pkg: Any, server: Recorder, secret: str
) -> None:
    with serving() as other:
        server.route("POST", "/hop/same", Answer(303, b"", {"Location": "/data/json"}))
        server.route("POST", "/hop/away", Answer(302, b"", {"Location": f"{other.url}/data/json"}))
        server.route("GET", "/data/json", Answer(200, {"landed": True}))
        tk = toolkit(pkg, server)
        same = tk.execute_sync("hop", {"to": "same"})
        assert same.data == {"landed": True}
        assert [(s.method, s.path) for s in server.seen] == [
            ("POST", "/hop/same"),
            ("GET", "/data/json"),  # 303: the redirect is fetched with GET
        ]
        away = tk.execute_sync("hop", {"to": "away"})
        assert away.is_error and away.output.startswith(
            f"HTTP 302: redirected to {other.url}, another origin than {server.url}; not followed"
        )
        assert other.seen == []  # nothing, and no credential, went there
        tk.close()


def test_a_secret_is_never_echoed_logged_or_traced(
    pkg: Any,
    server: Recorder,
    secret: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def echo(seen: Any) -> Answer:  # a server that sends the request's headers back
        return Answer(
            200, {"headers": seen.headers, "raw": f"auth={seen.headers['Authorization']}"}
        )

    server.route("GET", "/echo", echo)
    server.route("GET", "/deny", lambda seen: Answer(401, f"bad: {seen.headers['Authorization']}"))
    caplog.set_level(logging.DEBUG)
    tk = toolkit(pkg, server, instrument=provider)
    ok = tk.execute_sync("echo", {})
    denied = tk.execute_sync("deny", {})
    tk.close()
    assert server.seen[0].headers["Authorization"] == f"Bearer {secret}"  # it was sent
    assert ok.data["headers"]["Authorization"] == "Bearer [redacted]"
    assert ok.data["headers"]["X-Api-Key"] == "[redacted]"
    assert ok.data["raw"] == "auth=Bearer [redacted]"
    assert denied.output == "HTTP 401: bad: Bearer [redacted]"
    spans = exporter.get_finished_spans()
    assert len(spans) == 2
    seen_text = " ".join(
        [ok.output, denied.output, caplog.text]
        + [str(dict(span.attributes or {})) + str(span.status.description) for span in spans]
    )
    assert secret not in seen_text


def test_a_missing_variable_is_an_error_naming_it_and_sends_nothing(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN, raising=False)
    tk = toolkit(pkg, server)
    result = tk.execute_sync("echo", {})
    assert result.is_error
    assert result.output == (
        f"Tool 'echo' cannot run: the environment variable {TOKEN} is not set "
        "(the Authorization header is read from it)"
    )
    assert server.seen == []
    tk.close()


def test_arguments_are_validated_before_any_request(pkg: Any, server: Recorder) -> None:
    tk = toolkit(pkg, server)
    bad = tk.execute_sync("create_item", {"group": "seven"})
    assert bad.is_error and "group" in bad.output and "name" in bad.output
    assert server.seen == []
    tk.close()


def test_one_client_per_toolkit_reused_and_closed(pkg: Any, server: Recorder) -> None:
    server.route("GET", "/data/a", Answer(200, {"n": 1}))
    tk = toolkit(pkg, server)
    for _ in range(3):
        assert tk.execute_sync("fetch", {"kind": "a"}).data == {"n": 1}
    assert len({seen.port for seen in server.seen}) == 1  # one connection, kept alive
    executor = tk._executors["http"]
    client = executor._client
    tk.close()
    assert client.is_closed and executor._client is None
    assert tk.execute_sync("fetch", {"kind": "a"}).data == {"n": 1}  # opened again on use
    tk.close()


def test_your_own_client_is_used_and_left_open(pkg: Any, server: Recorder) -> None:
    server.route("GET", "/data/a", Answer(200, {"n": 1}))

    async def main() -> None:
        async with httpx.AsyncClient(headers={"X-Own": "mine"}) as client:
            async with toolkit(pkg, server, http_client=client) as tk:
                result = await tk.execute("fetch", {"kind": "a"}, ToolContext(call_id="c1"))
                assert result.data == {"n": 1}
            assert not client.is_closed  # the toolkit does not close what it did not open
        assert server.seen[-1].headers["X-Own"] == "mine"

    asyncio.run(main())
    with pytest.raises(TypeError, match="http_client must be an httpx.AsyncClient"):
        toolkit(pkg, server, http_client=httpx.Client())


def test_an_httpx2_client_works_too(pkg: Any, server: Recorder) -> None:
    import httpx2

    server.route("GET", "/data/a", Answer(200, {"n": 2}))
    server.route("POST", "/hop/x", Answer(307, b"", {"Location": "/data/a"}))
    client = httpx2.AsyncClient()
    tk = toolkit(pkg, server, http_client=client)
    assert tk.execute_sync("fetch", {"kind": "a"}).data == {"n": 2}
    assert tk.execute_sync("hop", {"to": "x"}).output.startswith("HTTP 404")  # 307 keeps POST
    assert server.seen[-1].method == "POST" and server.seen[-1].path == "/data/a"
    slow = pkg.Toolkit(pkg.ToolHandlers(), base_url="http://127.0.0.1:9", http_client=client)
    assert slow.execute_sync("fetch", {"kind": "a"}).error_type == "HttpUnreachable"
    tk.close()
    run_sync(client.aclose())


def test_base_url_comes_from_the_build_and_may_be_replaced_at_run_time(
    tmp_path: Path, server: Recorder
) -> None:
    server.route("GET", "/v2/data/x", Answer(200, {"from": "v2"}))
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nbase_url = "{server.url}/v2/"\n'
    )
    spec = {
        "description": "d",
        "input_schema": obj(["kind"], kind=STR),
        "http": {"url": "data/{kind}"},
    }
    pkg = build_in(tmp_path, {"fetch_v.yaml": spec})
    assert pkg.TOOLS["fetch_v"].binding["http"]["base_url"] == f"{server.url}/v2/"
    plain = pkg.Toolkit(pkg.ToolHandlers())
    assert plain.execute_sync("fetch_v", {"kind": "x"}).data == {"from": "v2"}
    plain.close()
    moved = pkg.Toolkit(pkg.ToolHandlers(), base_url={f"{server.url}/v2/": f"{server.url}/v3"})
    assert moved.execute_sync("fetch_v", {"kind": "x"}).output.startswith("HTTP 404")
    assert server.seen[-1].path == "/v3/data/x"
    moved.close()
    with pytest.raises(ValueError, match="base_url must be an absolute http"):
        pkg.Toolkit(pkg.ToolHandlers(), base_url="ftp://x")


# -- what a server (or a model) can send back: each an error result of an Http* kind or text,
# -- never a traceback, never a secret ------------------------------------------------------


def test_a_compressed_body_is_never_decompressed_past_the_cap(pkg: Any, server: Recorder) -> None:
    import gzip
    import tracemalloc

    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)  # 64 MiB in ~64 KB
    server.route("GET", "/data/bomb", Answer(200, bomb, {"Content-Encoding": "gzip"}))
    tk = toolkit(pkg, server)
    tracemalloc.start()
    try:
        result = tk.execute_sync("fetch", {"kind": "bomb"})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.error_type == "HttpBadResponse"
    assert result.output == "HTTP 200: the response is larger than 10 MiB; not read"
    assert peak < 32 * 1024 * 1024  # never the whole 64 MiB: decompressed in bounded steps
    tk.close()


def test_stacked_or_unasked_encodings_are_not_read(pkg: Any, server: Recorder) -> None:
    import gzip
    import zlib

    twice = gzip.compress(gzip.compress(b'{"a": 1}'))
    server.route("GET", "/data/twice", Answer(200, twice, {"Content-Encoding": "gzip, gzip"}))
    server.route(
        "GET", "/data/zstd", Answer(200, b"\x28\xb5\x2f\xfd...", {"Content-Encoding": "zstd"})
    )
    server.route("GET", "/data/broken", Answer(200, b"not gzip", {"Content-Encoding": "gzip"}))
    server.route(
        "GET",
        "/data/gz",
        Answer(
            200,
            gzip.compress(b'{"g": 1}'),
            {"Content-Encoding": "gzip", "Content-Type": "application/json"},
        ),
    )
    for name, raw in (
        ("zl", zlib.compress(b'{"d": 1}')),
        ("raw", zlib.compress(b'{"d": 1}')[2:-4]),
    ):
        headers = {"Content-Encoding": "deflate", "Content-Type": "application/json"}
        server.route("GET", f"/data/{name}", Answer(200, raw, headers))
    server.route("GET", "/status/502", Answer(502, b"\0", {"Content-Encoding": "br"}))
    tk = toolkit(pkg, server)
    twice_result = tk.execute_sync("fetch", {"kind": "twice"})
    assert (twice_result.error_type, twice_result.output) == (
        "HttpBadResponse",
        "HTTP 200: the body is encoded 2 times (gzip, gzip); not read",
    )
    zstd = tk.execute_sync("fetch", {"kind": "zstd"})
    assert zstd.error_type == "HttpBadResponse"
    assert zstd.output == (
        "HTTP 200: the body is encoded with zstd, which was not asked for "
        "(Accept-Encoding: gzip, deflate); not read"
    )
    broken = tk.execute_sync("fetch", {"kind": "broken"})
    assert (broken.error_type, broken.output) == (
        "HttpBadResponse",
        "HTTP 200: the body is not valid gzip; not read",
    )
    assert server.seen[0].headers["Accept-Encoding"] == "gzip, deflate"  # all it can read
    assert tk.execute_sync("fetch", {"kind": "gz"}).data == {"g": 1}
    assert tk.execute_sync("fetch", {"kind": "zl"}).data == {"d": 1}
    assert tk.execute_sync("fetch", {"kind": "raw"}).data == {"d": 1}  # raw deflate, as some send
    bad_gateway = tk.execute_sync("status", {"code": 502})
    assert bad_gateway.error_type == "HttpStatusError"  # the status still says what happened
    assert bad_gateway.output.startswith("HTTP 502: Bad Gateway (the body is encoded with br")
    tk.close()


def test_the_timeout_bounds_the_whole_exchange(pkg: Any, server: Recorder) -> None:
    import time

    # a byte every 0.1 s: every read is quick, the whole answer takes 2 s; slow has timeout 0.3
    server.route("GET", "/slow", Answer(200, "x" * 20, pace=0.1))
    tk = toolkit(pkg, server)
    started = time.monotonic()
    result = tk.execute_sync("slow", {})
    took = time.monotonic() - started
    assert result.error_type == "HttpTimeout", result.output
    assert result.output == f"Tool 'slow': no answer from {server.url} within 0.3 s"
    assert took < 1.5
    tk.close()


def test_no_cookie_is_kept_between_calls(pkg: Any, server: Recorder, secret: str) -> None:
    # one jar for every tool of a Toolkit would hand one server's cookie to another tool's
    # server, and one user's session to the next user of a shared Toolkit
    answer = Answer(200, {"n": 1}, {"Set-Cookie": "session=attacker; Path=/"})
    server.route("GET", "/data/a", answer)
    server.route("GET", "/data/b", Answer(200, {"n": 2}))
    server.route("GET", "/cookie", Answer(303, b"", {"Location": "/data/b"}))
    tk = toolkit(pkg, server)
    tk.execute_sync("fetch", {"kind": "a"})
    tk.execute_sync("fetch", {"kind": "b"})
    assert "Cookie" not in server.seen[-1].headers
    assert tk.execute_sync("cookie", {"lang": "en"}).data == {"n": 2}
    # a binding's own Cookie header is sent, and again after a redirect within the origin
    assert [seen.headers.get("Cookie") for seen in server.seen[-2:]] == [
        f"sid={secret}; lang=en"
    ] * 2
    tk.close()


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (SECRET + "\n", "a line break"),  # as a mounted secret file often ends
        ("s3cr3t\\with-a-backslash\x0b", "a control character (U+000B)"),
        ("s3cr3t-välue-nön-ascii", "a non-ASCII character"),
    ],
)
def test_an_environment_value_a_header_cannot_carry_is_named_never_shown(
    pkg: Any,
    server: Recorder,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    what: str,
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setenv(TOKEN, value)
    tk = toolkit(pkg, server, instrument=provider)
    result = tk.execute_sync("deny", {})
    tk.close()
    assert result.is_error and result.error_type == "ToolError"
    assert result.output == (
        f"Tool 'deny' cannot run: the environment variable {TOKEN} holds {what}, which a header "
        "cannot carry (the Authorization header is read from it; its value is not shown)"
    )
    assert server.seen == []
    (span,) = exporter.get_finished_spans()
    for text in (result.output, str(span.status.description), str(dict(span.attributes or {}))):
        assert "s3cr3t" not in text


@pytest.mark.parametrize(
    ("lang", "what"),
    [
        ("en\x0b", "a control character (U+000B)"),
        ("en\r\nX-Injected: 1", "a line break"),
        ("ü", "a non-ASCII character ('ü')"),
    ],
)
def test_a_header_argument_a_header_cannot_carry_is_an_invalid_argument(
    pkg: Any,
    server: Recorder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    lang: str,
    what: str,
) -> None:
    secret = "ab'cd\\efgh/1234-secret"  # a backslash: h11's message escaped it past redaction
    monkeypatch.setenv(TOKEN, secret)
    caplog.set_level(logging.WARNING)
    tk = toolkit(pkg, server)
    result = tk.execute_sync("cookie", {"lang": lang})
    tk.close()
    assert result.error_type == "invalid_arguments"
    assert result.output == (
        f"Invalid arguments for tool 'cookie': lang: a header value must be printable ASCII; "
        f"this one holds {what}. Fix the arguments and call it again."
    )
    assert server.seen == [] and not caplog.records  # no traceback logged
    assert "efgh" not in result.output


def test_redaction_reaches_every_form_a_server_echoes(
    pkg: Any, server: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    from urllib.parse import quote

    secret = "abcd/EFGH+ijkl/MNOP=="
    monkeypatch.setenv(TOKEN, secret)

    def straddle(seen: Any) -> Answer:  # the secret across the 2,000-character cut
        return Answer(401, "x" * 1985 + "token=" + seen.headers["Authorization"][7:])

    def php(seen: Any) -> Answer:  # PHP's json_encode writes / as \\/, served as HTML
        body = json.dumps({"got": seen.headers["Authorization"]}).replace("/", "\\/")
        return Answer(200, body, {"Content-Type": "text/html"})

    def percent(seen: Any) -> Answer:
        return Answer(200, "next=/login?t=" + quote(seen.headers["X-Api-Key"], safe=""))

    results = []
    for route in (straddle, php, percent):
        server.route("GET", "/echo", route)
        tk = toolkit(pkg, server)
        results.append(tk.execute_sync("echo", {}).output)
        tk.close()
    assert results[0] == "HTTP 401: " + "x" * 1985 + "token=[redacted... (1 more characters)"
    assert results[1] == '{"got": "Bearer [redacted]"}'
    assert results[2] == "next=/login?t=[redacted]"
    for output in results:
        for part in ("abcd", "MNOP", "ijkl"):
            assert part not in output


def test_what_the_http_library_says_about_a_header_is_never_repeated(
    pkg: Any, server: Recorder
) -> None:
    # h11 quotes the refused value, escaped (so redaction missed it) and whole
    client = httpx.AsyncClient(headers={"X-Custom": "private-value-0123\x0b"})
    tk = toolkit(pkg, server, http_client=client)
    result = tk.execute_sync("fetch", {"kind": "a"})
    run_sync(client.aclose())
    assert result.error_type == "HttpUnreachable"
    assert result.output == (
        f"Tool 'fetch': the request to {server.url} could not be sent: the HTTP library "
        "refused it (LocalProtocolError)"
    )
    assert server.seen == []


def test_credentials_of_your_own_client_are_redacted_too(pkg: Any, server: Recorder) -> None:
    import base64

    def echo_all(seen: Any) -> Answer:
        return Answer(401, {"you_sent": seen.headers})

    server.route("GET", "/data/a", echo_all)
    password = "Sup3r-S3cret-Pa55"
    client = httpx.AsyncClient(
        auth=("svc-user", password), headers={"X-Master-Key": "mk-0123456789"}
    )
    tk = toolkit(pkg, server, http_client=client)
    result = tk.execute_sync("fetch", {"kind": "a"})
    run_sync(client.aclose())
    assert server.seen[-1].headers["Authorization"].startswith("Basic ")  # it was sent
    basic = base64.b64encode(f"svc-user:{password}".encode()).decode()
    for secret in (password, basic, "mk-0123456789"):
        assert secret not in result.output
    assert '"Authorization": "Basic [redacted]"' in result.output
    assert '"X-Master-Key": "[redacted]"' in result.output


@pytest.mark.parametrize(
    ("answer", "kind", "output"),
    [
        (
            Answer(200, b"hello", {"Content-Type": "text/plain; charset=no-such-codec"}),
            "data",
            "hello",
        ),
        (
            Answer(500, b"broken", {"Content-Type": "text/plain; charset=no-such-codec"}),
            "status",
            "HTTP 500: broken",
        ),
        (
            Answer(200, b"[" * 100_000 + b"]" * 100_000, {"Content-Type": "application/json"}),
            "data",
            "[" * 50,
        ),
        (
            Answer(
                200, b'{"a": NaN, "b": Infinity, "c": 1e999}', {"Content-Type": "application/json"}
            ),
            "data",
            '{"a": NaN, "b": Infinity, "c": 1e999}',
        ),
        (
            Answer(200, b"[" * 200 + b"]" * 200, {"Content-Type": "application/json"}),
            "data",
            "[" * 200,
        ),
    ],
)
def test_what_a_server_sends_never_becomes_a_traceback(
    pkg: Any,
    server: Recorder,
    caplog: pytest.LogCaptureFixture,
    answer: Answer,
    kind: str,
    output: str,
) -> None:
    server.route("GET", "/data/x", answer)
    server.route("GET", "/status/500", answer)
    caplog.set_level(logging.WARNING)
    tk = toolkit(pkg, server)
    result = (
        tk.execute_sync("fetch", {"kind": "x"})
        if kind == "data"
        else tk.execute_sync("status", {"code": 500})
    )
    tk.close()
    assert not caplog.records, caplog.text  # nothing logged as a failure
    assert result.output.startswith(output)
    assert result.error_type == (None if kind == "data" else "HttpStatusError")
    assert result.data is None  # not JSON a result can hold: the text as it came


def test_json_a_result_cannot_hold_is_an_error_where_the_binding_says_json(
    pkg: Any, server: Recorder
) -> None:
    server.route(
        "GET", "/data/nan", Answer(200, b'{"a": NaN}', {"Content-Type": "application/json"})
    )
    tk = toolkit(pkg, server)
    result = tk.execute_sync("fetch_json", {"kind": "nan"})
    tk.close()
    assert result.error_type == "HttpBadResponse"
    assert result.output.startswith("HTTP 200: the body is not JSON this tool can return (NaN")


def test_a_hand_made_binding_cannot_set_headers_the_client_owns() -> None:
    from toolnexus_runtime.executors.http import _Call

    for header in ("Host", "Content-Length", "Transfer-Encoding", "Proxy-Authorization", "X Y"):
        binding = {"method": "GET", "url": "https://x.test/", "headers": {header: "v"}}
        with pytest.raises(ValueError, match="a tool cannot set the header"):
            _Call.make("t", binding, None)


# -- build-time checks ------------------------------------------------------------------------


def build_errors(tmp_path: Path, spec: dict[str, Any] | str, config: str = "") -> str:
    write_specs(tmp_path / "specs", {"tool.yaml": spec})
    if config:
        (tmp_path / "pyproject.toml").write_text(config)
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out").exists()  # nothing written
    return str(result.stderr)


def test_a_placeholder_that_is_not_a_property_is_a_located_error(tmp_path: Path) -> None:
    spec = (
        "description: d\n"
        "input_schema:\n"
        "  type: object\n"
        "  properties: {id: {type: integer}}\n"
        "  required: [id]\n"
        "http:\n"
        "  method: GET\n"
        "  url: https://api.test/items/{item_id}\n"
    )
    stderr = build_errors(tmp_path, spec)
    assert (
        "specs/tool.yaml:8:8: error[TN442]: placeholder {item_id} names no argument "
        "(arguments: id): add 'item_id' to input_schema.properties (at /http/url)"
    ) in stderr


@pytest.mark.parametrize(
    ("http", "schema", "code", "words"),
    [
        ({"url": "https://x.test/a/{id}"}, obj([], id=INT), "TN442", "must be required"),
        (
            {"url": "https://x.test/a/{id}"},
            obj(["id"], id={"type": "object"}),
            "TN442",
            "a string or an integer",
        ),
        ({"url": "/relative"}, None, "TN441", "there is no base_url"),
        ({"url": "ftp://x.test/a"}, None, "TN441", "absolute http(s) URL or a path"),
        ({"url": "https://{host}/a"}, obj(["host"], host=STR), "TN441", "never the host"),
        ({"url": "https://x.test/a?key=${KEY}"}, None, "TN441", "is not read in a URL"),
        ({"url": "https://x.test/a", "method": "FETCH"}, None, "TN440", "not an HTTP method"),
        ({"url": "https://x.test/a", "body": "json"}, None, "TN440", "a GET request has no body"),
        (
            {"url": "https://x.test/a", "query": ["nope"]},
            obj(["a"], a=STR),
            "TN442",
            "query names 'nope'",
        ),
        (
            {"url": "https://x.test/a", "method": "POST", "body_arg": "b"},
            None,
            "TN442",
            "body_arg names 'b'",
        ),
        (
            {"url": "https://x.test/a", "headers": {"Authorization": "Bearer abc"}},
            None,
            "TN443",
            "literal value",
        ),
        (
            {"url": "https://x.test/a", "headers": {"X-K": "${1BAD}"}},
            None,
            "TN441",
            "not an environment variable name",
        ),
        ({"url": "https://x.test/a", "body": "xml"}, None, "TN109", "'xml' is not one of"),
        # headers the HTTP client owns: from an argument, a request smuggling primitive
        *[
            (
                {"url": "https://x.test/a", "method": "POST", "headers": {name: "{v}"}},
                obj([], v=STR),
                "TN444",
                f"header {name!r} is set by the HTTP client itself",
            )
            for name in (
                "Host",
                "Content-Length",
                "transfer-encoding",
                "Connection",
                "TE",
                "Upgrade",
                "Expect",
                "Trailer",
                "Keep-Alive",
                "Proxy-Authorization",
            )
        ],
        *[
            (
                {"url": "https://x.test/a", "headers": {name: "v"}},
                None,
                "TN444",
                f"header {name!r} is not a header name",
            )
            for name in ("X Y", "X-K:", "X-\u00e9", "X-K\r\nX-Injected", "", "X-{v}")
        ],
        (
            {"url": "https://x.test/a", "headers": {"X-Note": "caf\u00e9"}},
            None,
            "TN444",
            "its text holds '\u00e9', which a header cannot carry",
        ),
        # credentials in *-Key, signature and session headers are secrets too
        *[
            (
                {"url": "https://x.test/a", "headers": {name: "0123456789abcdef"}},
                None,
                "TN443",
                f"header {name!r} holds a literal value",
            )
            for name in (
                "Ocp-Apim-Subscription-Key",
                "DD-APPLICATION-KEY",
                "X-Functions-Key",
                "X-Master-Key",
                "X-Access-Key",
                "X-Signature",
                "X-Session-Id",
            )
        ],
    ],
)
def test_bindings_the_build_refuses(
    tmp_path: Path, http: dict[str, Any], schema: Any, code: str, words: str
) -> None:
    spec: dict[str, Any] = {"description": "d", "http": http}
    if schema is not None:
        spec["input_schema"] = schema
    stderr = build_errors(tmp_path, spec)
    assert f"error[{code}]" in stderr and words in stderr, stderr


def test_a_bad_base_url_setting_is_a_config_error(tmp_path: Path) -> None:
    stderr = build_errors(
        tmp_path,
        {"description": "d", "http": {"url": "/a"}},
        '[tool.toolnexus-gen]\nbase_url = "not a url"\n',
    )
    assert "pyproject.toml:2:1: error[TN802]: base_url must be an absolute http(s) URL" in stderr
