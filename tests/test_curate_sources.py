"""The parts of curated sources on their own: Overlay 1.0 actions, the https fetch's refusals,
a fixed value sent as a header, and overlay and document paths kept inside the project."""

from __future__ import annotations

import importlib
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from rest_server import Answer, serving

from toolnexus_gen.ir import Document, Positions
from toolnexus_gen.sources import fetch, overlay


def _overlay(actions: list[dict[str, Any]], version: str = "1.0.0") -> Document:
    data = {"overlay": version, "info": {"title": "t", "version": "1"}, "actions": actions}
    return Document(Path("/x/o.yaml"), "o.yaml", data, Positions(), b"")


DOC = {
    "openapi": "3.0.3",
    "info": {"title": "T", "version": "1"},
    "tags": [{"name": "a"}],
    "paths": {
        "/a": {"get": {"summary": "A", "parameters": [{"name": "x"}, {"name": "y"}]}},
        "/b": {"get": {"summary": "B"}},
    },
}


def test_an_update_merges_objects_and_appends_to_arrays_and_leaves_the_input_alone() -> None:
    done = overlay.apply(
        DOC,
        [
            _overlay(
                [
                    {"target": "$.paths.*.get", "update": {"summary": "S", "x-new": {"k": 1}}},
                    {"target": "$.tags", "update": {"name": "b"}},
                    {"target": "$", "update": {"info": {"title": "Ours"}}},
                ]
            )
        ],
    )
    assert not done.diagnostics
    assert [op["get"]["summary"] for op in done.data["paths"].values()] == ["S", "S"]
    assert done.data["paths"]["/a"]["get"]["parameters"] == [{"name": "x"}, {"name": "y"}]
    assert done.data["tags"] == [{"name": "a"}, {"name": "b"}]
    assert done.data["info"] == {"title": "Ours", "version": "1"}  # merged, not replaced
    assert DOC["paths"]["/a"]["get"]["summary"] == "A"  # a copy was changed


def test_remove_takes_every_selected_node_out_in_order() -> None:
    done = overlay.apply(
        DOC,
        [
            _overlay([{"target": "$.paths['/a'].get.parameters[?@.name == 'x']", "remove": True}]),
            _overlay([{"target": "$.paths['/b']", "remove": True}]),
        ],
    )
    assert not done.diagnostics
    assert done.data["paths"] == {"/a": {"get": {"summary": "A", "parameters": [{"name": "y"}]}}}


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"target": "$.paths[", "remove": True}, "TN485"),
        ({"target": "paths", "remove": True}, "TN485"),
        ({"target": "$.paths", "remove": True, "update": {}}, "TN484"),
        ({"target": "$.paths", "replace": {}}, "TN484"),
        ({"target": "$.info", "update": "a string for an object"}, "TN485"),
        ({"target": "$.nothing", "remove": True}, "TN486"),
    ],
)
def test_a_bad_action_is_reported(action: dict[str, Any], code: str) -> None:
    done = overlay.apply(DOC, [_overlay([action])])
    assert [d.code for d in done.diagnostics] == [code]
    assert done.failed == (code != "TN486")


def test_an_update_replaces_a_value_it_selects() -> None:
    done = overlay.apply(DOC, [_overlay([{"target": "$.paths.*.get.summary", "update": "Ours"}])])
    assert not done.diagnostics
    assert [op["get"]["summary"] for op in done.data["paths"].values()] == ["Ours", "Ours"]


def test_only_overlay_1_0_is_read() -> None:
    done = overlay.apply(DOC, [_overlay([{"target": "$", "remove": True}], "1.1.0")])
    assert [d.code for d in done.diagnostics] == ["TN484"]


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/openapi.json",
        "https://10.1.2.3/openapi.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/openapi.json",
        "https://[::ffff:127.0.0.1]/openapi.json",
        "https://[64:ff9b::a00:1]/openapi.json",
        "https://localhost/openapi.json",
        "http://api.example.com/openapi.json",
        "https://user:secret@api.example.com/openapi.json",
        "file:///etc/passwd",
    ],
)
def test_the_fetch_refuses_what_the_runtime_refuses(url: str) -> None:
    with pytest.raises(fetch.FetchError):
        fetch.check(url)


def test_the_fetch_connects_to_the_address_it_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443))]])
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: next(answers))
    assert fetch.check("https://api.example.com/openapi.json") == (
        "api.example.com",
        443,
        "93.184.215.14",
    )  # resolved once: the connection is made to this address, not to a second answer


class _Response:
    def __init__(self, chunks: list[bytes], length: str | None = None) -> None:
        self.chunks, self.length = chunks, length

    def getheader(self, name: str) -> str | None:
        return self.length

    def read1(self, size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


class _Connection:
    sock = None


def test_the_fetch_caps_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "MAX_BYTES", 10)
    deadline = float("inf")
    with pytest.raises(fetch.FetchError, match="at most 10"):
        fetch._body(_Response([], "11"), _Connection(), deadline, "u")  # type: ignore[arg-type]
    with pytest.raises(fetch.FetchError, match="larger than 10"):
        fetch._body(_Response([b"123456", b"78901"]), _Connection(), deadline, "u")  # type: ignore[arg-type]
    assert fetch._body(_Response([b"12345", b"67890"]), _Connection(), deadline, "u") == (  # type: ignore[arg-type]
        b"1234567890"
    )


def _dripping(answer: bytes, head: int) -> int:
    """A port on 127.0.0.1 answering one request with `answer`: its first `head` bytes at once,
    then one byte each 0.2 s (a server holding a fetch with a header or a chunk-size line)."""
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        with conn, server:
            conn.recv(65536)
            conn.sendall(answer[:head])
            for byte in answer[head:]:
                try:
                    conn.send(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.2)

    threading.Thread(target=serve, daemon=True).start()
    return int(server.getsockname()[1])


@pytest.mark.parametrize(
    ("answer", "head"),
    [
        (b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 60 + b"\r\nContent-Length: 2\r\n\r\n{}", 0),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 60 + b"2\r\n{}", 47),
    ],
    ids=["headers", "chunk-size line"],
)
def test_the_fetch_deadline_holds_whatever_is_being_read(
    monkeypatch: pytest.MonkeyPatch, answer: bytes, head: int
) -> None:
    import time

    port = _dripping(answer, head)
    monkeypatch.setattr(fetch, "check", lambda url: ("127.0.0.1", port, "127.0.0.1"))

    def plain(self: Any) -> None:  # no TLS to a test server; the watchdog as in a real fetch
        self.sock = self.watched(socket.create_connection((self.ip, self.port), self.timeout))

    monkeypatch.setattr(fetch._Pinned, "connect", plain)
    started = time.monotonic()
    with pytest.raises(fetch.FetchError, match="took longer than 1 s"):
        fetch.fetch("https://api.example.com/openapi.json", timeout=1.0)
    assert time.monotonic() - started < 3  # not the 12 s the server would take


TEAM_DOC = {
    "openapi": "3.0.3",
    "info": {"title": "Teams", "version": "1"},
    "servers": [{"url": "https://teams.example"}],
    "paths": {
        "/teams/{team}/notes": {
            "post": {
                "operationId": "add_note",
                "parameters": [
                    {"name": "team", "in": "path", "required": True, "schema": {"type": "string"}},
                    {
                        "name": "X-Tenant",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                    {"name": "visibility", "in": "query", "schema": {"type": "string"}},
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["text", "author"],
                                "properties": {
                                    "text": {"type": "string"},
                                    "author": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def test_fixed_values_go_wherever_their_parameter_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\ntargets = ["openai"]\nout = "team_tools"\n\n'
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n\n'
        "[tool.toolnexus-gen.overrides.add_note]\n"
        'fixed = { team = "${TEAM}", X-Tenant = "${TENANT}", visibility = "${SEEN_BY}", '
        'author = "${AUTHOR}" }\n'
    )
    result = cli("sync", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("team_tools")
    finally:
        sys.path.remove(str(tmp_path))
    (entry,) = pkg.to_openai()
    assert list(entry["function"]["parameters"]["properties"]) == ["text"]
    for name, value in {
        "TEAM": "core",
        "TENANT": "acme",
        "SEEN_BY": "all",
        "AUTHOR": "bot",
    }.items():
        monkeypatch.setenv(name, value)
    with serving() as server:
        server.route("POST", "/teams/core/notes", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        done = tk.execute_sync("add_note", {"text": "hello"})
        assert not done.is_error, done.output
        (seen,) = server.seen
    assert seen.path == "/teams/core/notes"  # path
    assert seen.headers["X-Tenant"] == "acme"  # header
    assert seen.query == [("visibility", "all")]  # query
    assert seen.json == {"text": "hello", "author": "bot"}  # body


def test_overlays_and_documents_stay_inside_the_project(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "specs").mkdir(parents=True)
    (tmp_path / "outside.json").write_text(json.dumps(TEAM_DOC))
    (project / "teams.json").write_text(json.dumps(TEAM_DOC))
    (project / "link.json").symlink_to(tmp_path / "outside.json")
    for document, overlays, line in (
        ("../outside.json", "[]", 2),
        ("link.json", "[]", 2),
        ("teams.json", '["../outside.json"]', 3),
    ):
        (project / "pyproject.toml").write_text(
            f'[tool.toolnexus-gen.openapi.teams]\ndocument = "{document}"\noverlays = {overlays}\n'
        )
        result = cli("sync", cwd=project)
        assert result.exit_code == 2
        lines = (result.stdout + result.stderr).splitlines()
        assert any(x.startswith(f"pyproject.toml:{line}:1: error[TN482]") for x in lines), lines
        assert not (project / "specs" / "teams").exists()


def test_import_openapi_can_declare_the_document_and_sync_it(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    result = cli(
        "import",
        "openapi",
        "teams.json",
        "--declare",
        "teams",
        "--server",
        "https://t.example",
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.output + result.stderr
    text = (tmp_path / "pyproject.toml").read_text()
    assert text == (
        "[tool.toolnexus-gen]\n\n[tool.toolnexus-gen.openapi.teams]\n"
        'document = "teams.json"\nserver = "https://t.example"\n'
    )
    spec = json.loads((tmp_path / "specs" / "teams" / "add_note.json").read_text())
    assert spec["http"]["base_url"] == "https://t.example"
    again = cli("import", "openapi", "teams.json", "--declare", "teams", cwd=tmp_path)
    assert again.exit_code == 2 and (tmp_path / "pyproject.toml").read_text() == text
    failed = cli("import", "openapi", "teams.json", "--declare", "more", "--tag", "x", cwd=tmp_path)
    assert failed.exit_code == 2  # nothing tagged x: the declaration is not left behind
    assert (tmp_path / "pyproject.toml").read_text() == text


def test_a_link_in_the_synced_folder_never_leads_a_write_or_a_removal_out(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "p", tmp_path / "elsewhere"
    (project / "specs" / "teams").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "keep.json").write_text("{}\n")
    (project / "teams.json").write_text(json.dumps(TEAM_DOC))
    (project / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n'
    )
    (project / "specs" / "teams" / "_out").symlink_to(elsewhere)
    (project / "specs" / "teams" / ".toolnexus-sync.json").write_text(
        json.dumps({"files": ["_out/keep.json", "../../../elsewhere/keep.json"]})
    )
    result = cli("sync", cwd=project)
    assert result.exit_code == 2
    assert any("error[TN488]" in x and "symbolic link" in x for x in result.stderr.splitlines())
    assert (elsewhere / "keep.json").read_text() == "{}\n"
    assert not (project / "specs" / "teams" / "add_note.json").exists()


def test_a_curated_call_never_sends_what_the_model_made_up_under_a_source_name() -> None:
    import asyncio

    from pydantic import BaseModel, ConfigDict
    from toolnexus_runtime import ToolContext
    from toolnexus_runtime.executors.curated import Curated

    class Open(BaseModel):  # the curated model of a tool whose schema takes any other key
        model_config = ConfigDict(extra="allow")
        headline: str

    got: list[dict[str, Any]] = []

    class Source:  # a source's bound tool: takes the arguments as sent
        def validate(self, arguments: Any) -> Any:
            return arguments

        async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
            got.append(arguments)
            return "ok"

    settings = {"rename": {"headline": "title"}, "fixed": {"owner": "octo"}}
    tool = Curated("open_issue", Open, Source(), settings)
    args = tool.validate({"headline": "Broken", "title": "made up", "owner": "evil", "x": 1})
    assert asyncio.run(tool(args, ToolContext())) == "ok"
    assert got == [{"title": "Broken", "x": 1, "owner": "octo"}]


def test_exclude_leaves_a_tool_out_and_a_hidden_argument_sends_its_default(
    tmp_path: Path,
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("hit one\nhit two\nhit three\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nbuiltins = ["read", "grep"]\nout = "excluded_tools"\n\n'
        "[tool.toolnexus-gen.overrides.read]\nexclude = true\n\n"
        "[tool.toolnexus-gen.overrides.grep]\n"
        'hide = ["limit", "include"]\ndefaults = { limit = 2 }\n'
    )
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("excluded_tools")
    finally:
        sys.path.remove(str(tmp_path))
    (entry,) = pkg.to_openai()
    assert entry["function"]["name"] == "grep"
    assert list(entry["function"]["parameters"]["properties"]) == ["pattern", "path"]
    tk = pkg.Toolkit(pkg.ToolHandlers(), workspace=tmp_path / "work")
    found = tk.execute_sync("grep", {"pattern": "hit"})
    assert not found.is_error, found.output
    assert "hit one" in found.output and "hit two" in found.output
    assert "hit three" not in found.output  # the hidden limit's default (2) was sent
    assert tk.execute_sync("read", {"path": "a.txt"}).is_error  # no such tool


def test_an_mcp_tool_renamed_with_a_fixed_argument_calls_its_server_as_it_expects(
    tmp_path: Path,
) -> None:
    from mcp_helpers import calls, project, stdio

    count = tmp_path / "count"
    folder = project(tmp_path / "p", {"wiki": stdio("--count", str(count))}, out="curated_mcp")
    with open(folder / "pyproject.toml", "a") as pyproject:
        pyproject.write(
            "\n[tool.toolnexus-gen.overrides.wiki_add]\n"
            'name = "plus"\narguments.a = { name = "left" }\nfixed = { b = 10 }\n'
        )
    for command in ("sync", "build"):
        result = cli(command, cwd=folder)
        assert result.exit_code == 0, result.output + result.stderr
    sys.path.insert(0, str(folder))
    try:
        pkg = importlib.import_module("curated_mcp")
    finally:
        sys.path.remove(str(folder))
    entry = {t["name"]: t for t in pkg.to_mcp()}["plus"]
    assert entry["inputSchema"]["properties"].keys() == {"left"}
    tk = pkg.Toolkit(pkg.ToolHandlers(), mcp_config=folder / "mcp.json")
    try:
        added = tk.execute_sync("plus", {"left": 1})
    finally:
        tk.close()
    assert (added.is_error, added.data) == (False, {"sum": 11}), added.output
    assert calls(count)[-1] == 'add {"a": 1, "b": 10}'


def test_breaking_compares_the_curated_surface(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    config = (
        '[tool.toolnexus-gen]\nbuiltins = ["grep"]\nout = "grep_tools"\n\n'
        '[tool.toolnexus-gen.breaking]\nuse = ["callers", "model"]\n\n'  # no handler code
    )
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(config)
    assert cli("build", cwd=tmp_path).exit_code == 0
    (tmp_path / "grep_tools").rename(tmp_path / "before")
    pyproject.write_text(
        config + "[tool.toolnexus-gen.overrides.grep]\n"
        'name = "search"\nhide = ["include"]\narguments.pattern = { name = "regex" }\n'
    )
    assert cli("build", cwd=tmp_path).exit_code == 0
    result = cli("breaking", "--against", "before", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 1
    found = {(f["tool"], f["rule"]) for f in json.loads(result.stdout)["findings"]}
    assert ("grep", "TN501") in found  # what callers knew is gone: the override's name is new
    assert any(tool == "search" for tool, _ in found)


ITEMS_DOC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Items", "version": "1"},
    "servers": [{"url": "https://items.example"}],
    "paths": {
        "/items": {
            "get": {
                "operationId": "list_items",
                "parameters": [
                    {
                        "name": "region",
                        "in": "query",
                        "schema": {"type": "string", "default": "${ITEMS_SECRET}"},
                    },
                    {"name": "q", "in": "query", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def _items_package(root: Path, doc: dict[str, Any], override: str, out: str) -> tuple[Any, Any]:
    (root / "specs").mkdir(parents=True)
    (root / "items.json").write_text(json.dumps(doc))
    (root / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\ntargets = ["openai"]\nout = "{out}"\n\n'
        '[tool.toolnexus-gen.openapi.items]\ndocument = "items.json"\n\n'
        f"[tool.toolnexus-gen.overrides.list_items]\n{override}\n"
    )
    result = cli("sync", cwd=root)
    assert result.exit_code == 0, result.output + result.stderr
    built = cli("build", cwd=root)
    assert built.exit_code == 0, built.output + built.stderr
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(out), built
    finally:
        sys.path.remove(str(root))


def test_a_sources_default_is_sent_as_written_never_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg, built = _items_package(tmp_path, ITEMS_DOC, 'hide = ["region"]', "items_default_tools")
    lines = (built.stdout + built.stderr).splitlines()
    assert any(x.startswith("pyproject.toml:9:1: warning[TN377]") for x in lines), lines
    monkeypatch.setenv("ITEMS_SECRET", "secret-value-991")
    with serving() as server:
        server.route("GET", "/items", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        done = tk.execute_sync("list_items", {"q": "x"})
        assert not done.is_error, done.output
        (seen,) = server.seen
    assert sorted(seen.query) == [("q", "x"), ("region", "${ITEMS_SECRET}")]


def test_a_hidden_argument_is_never_taken_from_the_model_where_the_schema_takes_other_keys(
    tmp_path: Path,
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "admin_op.yaml").write_text(
        "description: An operation\n"
        "http: {method: POST, url: /ops, base_url: 'https://admin.example'}\n"
        "input_schema:\n  type: object\n  additionalProperties: true\n  properties:\n"
        "    title: {type: string}\n    is_admin: {type: boolean}\n  required: [title]\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\ntargets = ["openai"]\nout = "hidden_open_tools"\n\n'
        '[tool.toolnexus-gen.overrides.admin_op]\nhide = ["is_admin"]\n'
    )
    built = cli("build", cwd=tmp_path)
    assert built.exit_code == 0, built.output + built.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("hidden_open_tools")
    finally:
        sys.path.remove(str(tmp_path))
    with serving() as server:
        server.route("POST", "/ops", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        done = tk.execute_sync("admin_op", {"title": "t", "is_admin": True, "note": "n"})
        assert not done.is_error, done.output
        (seen,) = server.seen
    assert seen.json == {"title": "t", "note": "n"}  # another key goes; the hidden one never


def test_a_document_that_moves_its_tools_to_another_server_is_not_followed_unasked(
    tmp_path: Path,
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n')
    assert cli("sync", cwd=tmp_path).exit_code == 0
    spec = tmp_path / "specs" / "teams" / "add_note.json"
    before = spec.read_text()
    moved = json.loads(json.dumps(TEAM_DOC))
    moved["servers"] = [{"url": "https://collector.example:8443/v1"}]
    (tmp_path / "teams.json").write_text(json.dumps(moved))
    refused = cli("sync", cwd=tmp_path)
    assert refused.exit_code == 2
    lines = (refused.stdout + refused.stderr).splitlines()
    (line,) = [x for x in lines if "error[TN378]" in x]
    assert line.startswith("pyproject.toml:2:1: error[TN378]")
    assert "https://collector.example:8443" in line and "https://teams.example" in line
    assert spec.read_text() == before  # nothing written
    assert cli("sync", "--check", cwd=tmp_path).exit_code == 1  # listed as drift
    accepted = cli("sync", "--accept-origin", cwd=tmp_path)
    assert accepted.exit_code == 0, accepted.output + accepted.stderr
    assert json.loads(spec.read_text())["http"]["base_url"] == "https://collector.example:8443/v1"
    # a declaration that pins its server: the document's servers do not matter
    pyproject.write_text(
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n'
        'server = "https://teams.example"\n'
    )
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    assert cli("sync", cwd=tmp_path).exit_code == 0


def test_an_argument_moved_from_a_header_to_the_query_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n'
    )
    assert cli("sync", cwd=tmp_path).exit_code == 0
    moved = json.loads(json.dumps(TEAM_DOC))
    moved["paths"]["/teams/{team}/notes"]["post"]["parameters"][1]["in"] = "query"
    (tmp_path / "teams.json").write_text(json.dumps(moved))
    result = cli("sync", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    lines = (result.stdout + result.stderr).splitlines()
    assert any("warning[TN379]" in x and "'X-Tenant'" in x for x in lines), lines


def test_a_declared_server_with_a_password_is_refused_without_repeating_it(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n'
        'server = "https://bot:hunter2@teams.example"\n'
    )
    for command in ("sync", "build"):
        result = cli(command, cwd=tmp_path)
        assert result.exit_code == 2
        lines = (result.stdout + result.stderr).splitlines()
        assert any(
            x.startswith("pyproject.toml:3:1: error[TN811]") and "https://***@teams.example" in x
            for x in lines
        ), lines
        assert "hunter2" not in result.stdout + result.stderr
    assert not (tmp_path / "specs" / "teams").exists()


def test_a_fixed_header_value_with_a_line_break_is_refused_at_build(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nout = "crlf_tools"\n\n'
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n\n'
        "[tool.toolnexus-gen.overrides.add_note]\n"
        'fixed = { X-Tenant = "acme\\r\\nX-Admin: yes", visibility = "a\\nb" }\n'
    )
    assert cli("sync", cwd=tmp_path).exit_code == 0
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    lines = (result.stdout + result.stderr).splitlines()
    found = [x for x in lines if "error[TN374]" in x]
    assert len(found) == 1 and found[0].startswith("pyproject.toml:8:11: error[TN374]"), lines
    assert "fixed.X-Tenant" in found[0] and "header" in found[0]  # a query value is encoded
    assert not (tmp_path / "crlf_tools").exists()


def test_a_rename_onto_a_hidden_arguments_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "teams.json").write_text(json.dumps(TEAM_DOC))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nout = "onto_tools"\n\n'
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "teams.json"\n\n'
        "[tool.toolnexus-gen.overrides.add_note]\n"
        'fixed = { team = "core" }\narguments.text = { name = "team" }\n'
    )
    assert cli("sync", cwd=tmp_path).exit_code == 0
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    lines = (result.stdout + result.stderr).splitlines()
    assert any(
        x.startswith("pyproject.toml:9:1: error[TN372]") and "hidden argument" in x for x in lines
    ), lines


def test_a_document_url_is_a_url_whatever_the_case_of_its_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.openapi.teams]\ndocument = "HTTPS://teams.example/openapi.json"\n'
    )
    fetched: list[str] = []

    def fake(url: str, timeout: float = 60.0) -> bytes:
        fetched.append(url)
        return json.dumps(TEAM_DOC).encode()

    monkeypatch.setattr(fetch, "fetch", fake)
    result = cli("sync", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    assert fetched == ["HTTPS://teams.example/openapi.json"]  # fetched, not read as a path
    assert (tmp_path / "specs" / "teams" / "add_note.json").is_file()
