"""`toolnexus-gen sync`: MCP servers started for real by the tests (a stdio server written with
the official SDK, a streamable-HTTP one behind a bearer token under uvicorn, broken and hanging
ones), snapshotted into the spec folder, drift-checked, and built offline like any spec."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, cli_process, snapshot, write_specs
from mcp_helpers import TOKEN, TOOLS, UPSTREAM, Upstream, free_port, project, stdio


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def spec(folder: Path, name: str) -> dict[str, Any]:
    return json.loads((folder / "specs" / name).read_text())


def test_sync_snapshots_every_page_then_builds_offline(tmp_path: Path) -> None:
    folder = project(
        tmp_path / "p", {"wiki": stdio("--page", "2")}, {"now.yaml": {"description": "Now"}}
    )
    result = cli("sync", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    assert "wiki: 6 tools (stdio, " in result.output
    files = sorted(p.name for p in (folder / "specs" / "wiki").iterdir())
    assert files == [
        "wiki_add.json",
        "wiki_crash.json",
        "wiki_fail.json",
        "wiki_search-pages.json",
        "wiki_slow.json",
        "wiki_whoami.json",
    ]  # three pages of two
    search = spec(folder, "wiki/wiki_search-pages.json")
    sent = TOOLS[0]
    assert list(search) == [
        "name",
        "title",
        "description",
        "input_schema",
        "annotations",
        "profile",
        "source",
    ]
    assert search["profile"] == "reach"  # the setting that carries it to every target
    assert search["input_schema"] == sent["inputSchema"]
    assert list(search["input_schema"]["properties"]) == ["query", "limit"]  # the server's order
    assert search["annotations"] == {"readOnlyHint": True}
    assert search["source"] == {"mcp": {"server": "wiki", "tool": "search-pages"}}
    assert spec(folder, "wiki/wiki_add.json")["output_schema"] == TOOLS[1]["outputSchema"]

    # build never connects: the snapshot is a spec like any other, typed and bound.
    built = cli("build", cwd=folder)
    assert built.exit_code == 0, built.output + built.stderr
    handlers = (folder / "tools/handlers.py").read_text()
    assert "def now" in handlers and "wiki_add" not in handlers
    dispatch = (folder / "tools/dispatch.py").read_text()
    assert 'binding={"mcp": {"server": "wiki", "tool": "search-pages"}}' in dispatch
    mcp_names = [t["name"] for t in json.loads((folder / "tools/schemas/mcp.json").read_text())]
    assert "wiki_search-pages" in mcp_names


def test_drift_is_named_by_tool_and_pointer_and_sync_follows(
    tmp_path: Path, upstream: Upstream
) -> None:
    allow = ["search-pages", "add", "fail", "create page"]
    folder = project(tmp_path / "p", {"wiki": upstream.entry(prefix="w", tools=allow)})
    assert cli("sync", cwd=folder).exit_code == 0
    # An unchanged server changes no byte and no modification time; --check agrees.
    unchanged = snapshot(folder / "specs")
    again = cli("sync", cwd=folder)
    assert again.exit_code == 0 and "0 files written, 3 unchanged" in again.output
    assert snapshot(folder / "specs") == unchanged
    assert cli("sync", "--check", cwd=folder).exit_code == 0
    changed = json.loads(json.dumps(TOOLS))
    changed[0]["inputSchema"]["properties"]["limit"]["maximum"] = 50
    changed[0]["inputSchema"]["required"].append("limit")
    changed[0]["description"] = "Search every page"
    del changed[2]  # fail: gone upstream
    changed.append({"name": "create page", "inputSchema": {"type": "object", "properties": {}}})
    before = snapshot(folder / "specs")
    with upstream.serving(changed):
        check = cli("sync", "--check", cwd=folder)
        assert snapshot(folder / "specs") == before  # --check writes nothing
        synced = cli("sync", cwd=folder)
        again = cli("sync", "--check", cwd=folder)
    assert check.exit_code == 1
    err = check.stderr
    assert (
        "specs/wiki/w_create_page.json: added upstream (tool 'create page' of server 'wiki')" in err
    )
    assert "specs/wiki/w_fail.json: removed upstream (tool 'fail' of server 'wiki')" in err
    assert (
        "specs/wiki/w_search-pages.json: changed upstream (tool 'search-pages' of server 'wiki'): "
        "/description changed, /input_schema/properties/limit/maximum added, "
        "/input_schema/required/1 added"
    ) in err
    assert "w_add" not in err
    assert "warning[TN405]" in err  # the allowlist names 'fail', which the server dropped
    assert "run `toolnexus-gen sync --server wiki`" in err

    assert synced.exit_code == 0, synced.stderr
    assert "warning[TN408]" in synced.stderr  # 'create page' has no description
    assert sorted(p.name for p in (folder / "specs/wiki").iterdir()) == [
        ".toolnexus-sync.json",  # what upstream removed, for the build's overrides
        "w_add.json",
        "w_create_page.json",
        "w_search-pages.json",
    ]
    assert spec(folder, "wiki/w_create_page.json")["description"] == "create page"
    assert spec(folder, "wiki/.toolnexus-sync.json") == {
        "source": {"mcp": "wiki"},
        "gone": {"w_fail": "removed upstream by `sync` of MCP server 'wiki'"},
    }
    assert again.exit_code == 0
    # an override of the tool that went is a warning naming that change, not an error
    with open(folder / "pyproject.toml", "a") as pyproject:
        pyproject.write('\n[tool.toolnexus-gen.overrides.w_fail]\ndescription = "Fail"\n')
    built = cli("build", cwd=folder)
    assert built.exit_code == 0, built.output + built.stderr
    assert "warning[TN376]: overrides.w_fail: tool 'w_fail' is gone upstream" in built.output


def test_http_server_behind_a_bearer_token(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = {
        "url": upstream.url,
        "headers": {"Authorization": "Bearer ${WIKI_TOKEN}"},
        "prefix": "",
    }
    folder = project(tmp_path / "p", {"remote": remote})
    monkeypatch.delenv("WIKI_TOKEN", raising=False)
    missing = cli("sync", cwd=folder)
    assert missing.exit_code == 2
    assert (
        "error[TN404]: server 'remote': environment variable WIKI_TOKEN (in headers) is not set"
        in missing.stderr
    )
    assert not (folder / "specs/remote").exists()

    monkeypatch.setenv("WIKI_TOKEN", "wrong-token-123")
    refused = cli("sync", cwd=folder)
    assert refused.exit_code == 1
    assert "error[TN410]: server 'remote' (streamable HTTP): " in refused.stderr
    assert "answered HTTP 401 Unauthorized" in refused.stderr
    assert "wrong-token-123" not in refused.output + refused.stderr

    monkeypatch.setenv("WIKI_TOKEN", TOKEN)
    result = cli("sync", cwd=folder)
    assert result.exit_code == 0, result.stderr
    assert "remote: 6 tools (streamable HTTP, " in result.output
    assert spec(folder, "remote/search-pages.json")["source"]["mcp"] == {
        "server": "remote",
        "tool": "search-pages",
    }
    written = b"".join(p.read_bytes() for p in (folder / "specs").rglob("*.json"))
    assert TOKEN.encode() not in written


def test_a_failing_server_is_one_line_and_leaves_its_snapshot(
    tmp_path: Path, upstream: Upstream
) -> None:
    closed = free_port()
    servers = {
        "wiki": upstream.entry(),
        "nocommand": {"command": str(tmp_path / "no-such-server")},
        "exits": stdio("--mode", "exit"),
        "garbage": stdio("--mode", "garbage"),
        "closed": {"url": f"http://127.0.0.1:{closed}/mcp"},
    }
    folder = project(tmp_path / "p", servers)
    old = {
        "name": "garbage_old",
        "description": "kept",
        "source": {"mcp": {"server": "garbage", "tool": "old"}},
    }
    write_specs(folder / "specs", {"garbage/garbage_old.json": old})
    before = snapshot(folder / "specs/garbage")
    result = cli("sync", cwd=folder)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if "error[" in line]
    assert len(lines) == 4, result.stderr
    by_server = {line.split("server '")[1].split("'")[0]: line for line in lines}
    assert "error[TN410]" in by_server["nocommand"] and "could not start" in by_server["nocommand"]
    assert "No such file" in by_server["nocommand"]
    assert "error[TN410]" in by_server["exits"]
    assert "cannot start, missing configuration" in by_server["exits"]  # its stderr, quoted
    assert "error[TN412]" in by_server["garbage"] and "not valid MCP" in by_server["garbage"]
    assert "error[TN410]" in by_server["closed"] and f"127.0.0.1:{closed}" in by_server["closed"]
    for line in lines:
        assert line.startswith("mcp.json:"), line  # located at the server's entry
    assert "4 of 5 servers failed; their snapshots are unchanged." in result.stderr
    assert (folder / "specs/wiki/wiki_add.json").exists()  # the others still sync
    assert snapshot(folder / "specs/garbage") == before


def test_a_server_that_floods_stderr_is_quoted_by_its_last_line(tmp_path: Path) -> None:
    folder = project(tmp_path / "p", {"chatty": stdio("--mode", "chatty")})
    result = cli("sync", cwd=folder)
    assert result.exit_code == 1
    (line,) = [line for line in result.stderr.splitlines() if "error[" in line]
    assert "error[TN410]" in line
    assert "its last words on stderr: upstream: giving up after the noise" in line


def test_what_a_server_sends_never_reaches_the_terminal_raw(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Escape sequences in a server's error text, property names (drift pointers) and
    descriptions (`list`) are printed escaped: they would retitle the window, clear the screen,
    set the clipboard (OSC 52) or forge a line of output."""
    from upstream_mcp import ESCAPES

    folder = project(tmp_path / "p", {"bad": stdio("--mode", "escapes"), "wiki": upstream.entry()})
    failed = cli("sync", "--server", "bad", cwd=folder)
    assert failed.exit_code == 1 and "error[TN412]: server 'bad'" in failed.stderr
    assert "down \\x1b]0;PWNED\\x07\\x1b[2J" in failed.stderr
    assert cli("sync", "--server", "wiki", cwd=folder).exit_code == 0
    hostile = json.loads(json.dumps(TOOLS))
    hostile[0]["description"] = f"Search {ESCAPES}"
    hostile[0]["inputSchema"]["properties"][ESCAPES] = {"type": "string"}
    with upstream.serving(hostile):
        check = cli("sync", "--check", "--server", "wiki", cwd=folder)
        assert check.exit_code == 1
        assert cli("sync", "--server", "wiki", cwd=folder).exit_code == 0
    listed = cli("list", cwd=folder)
    assert "/input_schema/properties/\\x1b]0;PWNED\\x07" in check.stderr
    assert "Search \\x1b]0;PWNED" in listed.output
    for said in (failed, check, listed):
        text = said.output + said.stderr
        assert "\x1b" not in text and "\x07" not in text and "\nspecs/x.json" not in text


def test_a_server_that_never_answers_costs_about_its_timeout(
    tmp_path: Path, silent_port: int
) -> None:
    """However many handshakes the SDK's version negotiation would try, the set-up shares one
    timeout: a stdio server that reads and never answers, and a port that accepts and never
    answers, each cost about their timeout (synced in parallel)."""
    timeout = 2.0
    servers = {
        "hangs": stdio("--mode", "hang", timeout=timeout),
        "silent": {"url": f"http://127.0.0.1:{silent_port}/mcp", "timeout": timeout},
    }
    folder = project(tmp_path / "p", servers)
    import mcp.client.stdio  # noqa: F401 (the SDK's import time is not the server's)

    start = time.perf_counter()
    result = cli("sync", cwd=folder)
    elapsed = time.perf_counter() - start
    assert result.exit_code == 1
    assert result.stderr.count("error[TN411]") == 2
    assert f"no answer within {timeout:g} s (connect and initialize)" in result.stderr
    assert timeout <= elapsed < 1.8 * timeout, elapsed


def test_a_server_that_pages_without_end_costs_about_twice_its_timeout(tmp_path: Path) -> None:
    """Each page answered in time, but never a last one: the whole of tools/list shares one
    timeout (a fresh one per page would be 1,000 pages of up to `timeout` each)."""
    timeout = 4.0  # the set-up (a Python process starting) must fit in it
    servers = {
        "endless": stdio("--cursor", "endless", "--delay", "0.3", timeout=timeout),
        "loop": stdio("--cursor", "loop", timeout=timeout),
    }
    folder = project(tmp_path / "p", servers)
    start = time.perf_counter()
    result = cli("sync", cwd=folder)
    elapsed = time.perf_counter() - start
    assert result.exit_code == 1
    assert (
        f"error[TN411]: server 'endless' (stdio): tools/list did not finish within {timeout:g} s"
        in result.stderr
    )
    assert "error[TN412]: server 'loop' (stdio): tools/list sent cursor 'again' twice" in (
        result.stderr
    )
    assert elapsed < 2 * timeout + 2, elapsed  # set-up (its own timeout) plus one listing


def test_too_many_pages_or_tools_fail_the_server_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolnexus_gen.sources.mcp as source

    monkeypatch.setattr(source, "MAX_PAGES", 5)
    monkeypatch.setattr(source, "MAX_TOOLS", 6)
    seven = tmp_path / "seven.json"  # one more tool than the limit, on pages that do end
    seven.write_text(json.dumps([*TOOLS, {**TOOLS[0], "name": "seventh"}]))
    servers = {
        "endless": stdio("--cursor", "endless", "--page", "2"),  # 6 tools, then empty pages
        "many": stdio("--tools", str(seven), "--page", "2"),
    }
    folder = project(tmp_path / "p", servers)
    result = cli("sync", cwd=folder)
    assert result.exit_code == 1
    assert "error[TN412]: server 'endless' (stdio): tools/list did not end after 5 pages" in (
        result.stderr
    )
    assert "error[TN412]: server 'many' (stdio): tools/list sent more than 6 tools" in (
        result.stderr
    )
    assert not (folder / "specs" / "endless").exists()
    assert not (folder / "specs" / "many").exists()


def test_bad_mcp_json_is_located_and_writes_nothing(tmp_path: Path) -> None:
    cases = {
        '{"mcpServers": {"a": {"command": "x",}}}': ("1:38", "TN401", "invalid JSON"),
        '{"mcpServers": {\n  "a": {"env": {}}\n}}': ("2:3", "TN403", "neither command"),
        '{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}': ("1:17", "TN403", "both"),
        '{"mcpServers": {"a": {\n    "command": "x",\n    "comand": "y"}}}': (
            "3:5",
            "TN402",
            "unknown key 'comand'",
        ),
        '{"mcpServers": {"a": {"command": "x", "timeout": 30000}}}': (
            "1:39",
            "TN402",
            "seconds, not milliseconds",
        ),
        '{"mcpServers": {"a": {"url": "ftp://h"}}}': ("1:23", "TN402", "http:// or https://"),
        '{"mcpServers": {"../up": {"command": "x"}}}': ("1:17", "TN402", "server name"),
        '{"servers": {}, "mcpServers": {}}': ("1:2", "TN402", "keep one"),
        '{"tools": []}': ("1:1", "TN402", "no mcpServers object (nor servers, nor mcp)"),
        '{"mcpServers": {"a": {"type": "websocket", "url": "ws://h/mcp"}}}': (
            "1:23",
            "TN402",
            "type must be one of 'stdio', 'local', 'http', 'streamable-http'",
        ),
        '{"mcpServers": {"a": {"command": "x", "args": ["${input:key}"]}}}': (
            "1:39",
            "TN404",
            "input 'key' (in args) is read from the environment variable KEY, which is not set",
        ),
        '{"mcpServers": {"a": {"command": "x", "args": ["${config:editor.tabSize}"]}}}': (
            "1:39",
            "TN404",
            "is not a variable this file can use",
        ),
    }
    for text, (where, code, words) in cases.items():
        folder = project(tmp_path / code / str(len(text)), {})
        (folder / "mcp.json").write_text(text)
        result = cli("sync", cwd=folder)
        assert result.exit_code == 2, (text, result.output)
        assert f"mcp.json:{where}: error[{code}]" in result.stderr, (text, result.stderr)
        assert words in result.stderr, (text, result.stderr)
        assert list((folder / "specs").iterdir()) == []


def test_a_missing_variable_is_named_and_no_value_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESENT_SECRET", "s3cr3t-value-42")
    monkeypatch.delenv("ABSENT_VAR", raising=False)
    folder = project(
        tmp_path / "p",
        {"a": stdio("${PRESENT_SECRET}", "${ABSENT_VAR}", env={"X": "${ABSENT_VAR:-dflt}"})},
    )
    result = cli("sync", cwd=folder)
    assert result.exit_code == 2
    assert "environment variable ABSENT_VAR (in args) is not set" in result.stderr
    assert "s3cr3t-value-42" not in result.output + result.stderr
    assert "dflt" not in result.stderr  # a default is used, not reported


def test_a_value_with_a_control_character_is_refused_by_name_and_never_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token read from a file keeps its newline: the HTTP library's error would quote the
    header as bytes (`b'Bearer sk-live-123456\\n'`), which the plain value does not match."""
    monkeypatch.setenv("TOK", "sk-live-123456\n")
    monkeypatch.setenv("PEM", "-----BEGIN KEY-----\nabc\n-----END KEY-----\n")
    folder = project(
        tmp_path / "p",
        {
            "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"A": "Bearer ${TOK}"}},
            "local": stdio("--token=${TOK}", env={"KEY": "${PEM}"}),
        },
    )
    result = cli("sync", cwd=folder)
    assert result.exit_code == 2
    for server, key in (("remote", "headers"), ("local", "args")):
        assert (
            f"error[TN409]: server '{server}': environment variable TOK (in {key}) holds a "
            "control character (a trailing newline?)"
        ) in result.stderr
    assert "PEM" not in result.stderr  # an env value may be multi-line
    assert "sk-live" not in result.output + result.stderr
    assert list((folder / "specs").iterdir()) == []


def test_secrets_are_hidden_in_their_escaped_forms_too(tmp_path: Path) -> None:
    from toolnexus_gen.sources import mcp_config

    folder = project(tmp_path / "p", {"s": {"url": "http://h/mcp", "headers": {"A": "${T}"}}})
    config = mcp_config.read(folder / "mcp.json")
    token = 'tok-\u00e9t\u00e9-"quoted"-9'
    server, problems = mcp_config.expand(config, config.servers[0], {"T": token})
    assert problems == []
    for said in (token, repr(token), repr(token.encode()), json.dumps(token)):
        hidden = mcp_config.hide(f"Illegal header value {said}", server)
        assert "quoted" not in hidden and "***" in hidden, hidden


def test_collisions_name_both_and_write_nothing(tmp_path: Path, upstream: Upstream) -> None:
    folder = project(
        tmp_path / "p",
        {"one": upstream.entry(prefix="x"), "two": upstream.entry(prefix="x")},
        {"mine/x_whoami.yaml": {"description": "mine"}},
    )
    result = cli("sync", cwd=folder)
    assert result.exit_code == 2
    assert (
        "error[TN406]: tool 'add' of server 'one' and tool 'add' of server 'two' both become spec 'x_add'"
        in result.stderr
    )
    assert "specs/mine/x_whoami.yaml:1:1: error[TN407]" in result.stderr
    assert "tool 'whoami' of MCP server 'one'" in result.stderr
    assert not (folder / "specs/one").exists() and not (folder / "specs/two").exists()


@pytest.mark.parametrize(
    "hostile", ["_shared", "x" * 260, "", "../../x"], ids=["fragment", "long", "empty", "dots"]
)
def test_a_tool_name_that_cannot_be_a_spec_file_fails_its_server_only(
    tmp_path: Path, upstream: Upstream, hostile: str
) -> None:
    """With prefix "", `_shared` would overwrite the user's fragment (and not be a tool at
    build), 260 characters would fail the write after other servers were written, "" and
    "../../x" give `.json` and `______x.json`: the server fails in one located line, its
    snapshot untouched; the others are synced."""
    folder = project(tmp_path / "p", {"evil": upstream.entry(prefix=""), "good": stdio()})
    fragment = '{"$defs": {"id": {"type": "string"}}}\n'
    write_specs(folder / "specs", {})
    (folder / "specs/evil").mkdir()
    (folder / "specs/evil/_shared.json").write_text(fragment)
    obj = {"type": "object", "properties": {}}
    sent = [{"name": hostile, "inputSchema": obj}, {"name": "fine", "inputSchema": obj}]
    with upstream.serving(sent):
        result = cli("sync", cwd=folder)
    assert result.exit_code == 1, result.output + result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "error[" in line]
    assert line.startswith("mcp.json:") and "error[TN413]: server 'evil'" in line
    assert "tools` allowlist" in line
    assert sorted(p.name for p in (folder / "specs/evil").iterdir()) == ["_shared.json"]
    assert (folder / "specs/evil/_shared.json").read_text() == fragment
    assert (folder / "specs/good/good_add.json").exists()  # the other server is synced


def test_a_file_sync_did_not_write_is_never_replaced(tmp_path: Path, upstream: Upstream) -> None:
    folder = project(tmp_path / "p", {"wiki": upstream.entry(tools=["add"])})
    (folder / "specs/wiki/wiki_add.json").mkdir(parents=True)  # not a spec, but in the way
    result = cli("sync", cwd=folder)
    assert result.exit_code == 2
    assert "specs/wiki/wiki_add.json:1:1: error[TN407]: this file is in the way" in result.stderr
    assert (folder / "specs/wiki/wiki_add.json").is_dir()


def test_one_server_disabled_servers_and_unknown_names(tmp_path: Path, upstream: Upstream) -> None:
    folder = project(
        tmp_path / "p",
        {"wiki": upstream.entry(tools=["add"]), "off": {"command": "nope", "enabled": False}},
    )
    only = cli("sync", "--server", "wiki", cwd=folder)
    assert only.exit_code == 0, only.stderr
    assert [p.name for p in (folder / "specs/wiki").iterdir()] == ["wiki_add.json"]
    assert "off" not in only.output
    everything = cli("sync", "--check", cwd=folder)
    assert everything.exit_code == 0 and "off: skipped (enabled: false)" in everything.output
    unknown = cli("sync", "--server", "wkii", cwd=folder)
    assert unknown.exit_code == 2 and "has no server 'wkii' (it has: wiki, off)" in unknown.stderr
    disabled = cli("sync", "--server", "off", cwd=folder)
    assert disabled.exit_code == 2 and "disabled" in disabled.stderr


def test_hand_written_specs_in_a_server_folder_are_left_alone(
    tmp_path: Path, upstream: Upstream
) -> None:
    mine = {"description": "my notes on the wiki server"}
    folder = project(
        tmp_path / "p", {"wiki": upstream.entry(tools=["add"])}, {"wiki/notes.yaml": mine}
    )
    assert cli("sync", cwd=folder).exit_code == 0
    assert (folder / "specs/wiki/notes.yaml").exists()
    assert (folder / "specs/wiki/wiki_add.json").exists()


def test_sync_says_how_to_install_the_sdk_and_build_never_needs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project(tmp_path / "p", {"wiki": stdio()}, {"now.yaml": {"description": "Now"}})
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "mcp", None)  # import mcp now raises ImportError
        sync = cli("sync", cwd=folder)
    assert sync.exit_code == 2
    assert "pip install 'toolnexus-gen[mcp]'" in sync.stderr
    # build never imports it (a package named mcp that cannot be imported is first on the path)
    blocker = tmp_path / "blocker"
    (blocker / "mcp").mkdir(parents=True)
    (blocker / "mcp" / "__init__.py").write_text("raise ImportError('mcp is not installed')\n")
    build = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(blocker)},
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr


def test_a_server_that_prints_on_stdout_is_one_line_never_a_traceback(tmp_path: Path) -> None:
    """A server that logs its start-up on stdout (a print, a JSON line that is not JSON-RPC):
    the SDK logged each line with a pydantic traceback; sync says it in one warning naming the
    server and the first line, and the tools are synced all the same. The server is started by
    a `python -c` script: a newline and a tab in args are what such a script holds."""
    script = (
        "import runpy, sys\n"
        "if True:\n"
        "\tprint('Starting wiki server v1.2 on stdio...', flush=True)\n"
        '\tprint(\'{"level": "info", "msg": "ready"}\', flush=True)\n'
        "sys.argv = ['upstream_mcp.py']\n"
        f"runpy.run_path({str(UPSTREAM)!r}, run_name='__main__')\n"
    )
    folder = project(tmp_path / "p", {"noisy": {"command": sys.executable, "args": ["-c", script]}})
    result = cli_process("sync", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "ValidationError" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [
        "mcp.json:3:5: warning[TN412]: server 'noisy' (stdio): it wrote 2 lines on stdout that "
        "are not MCP (the first: 'Starting wiki server v1.2 on stdio...'), skipped; a stdio "
        "server must log to stderr"
    ]
    assert "noisy: 6 tools (stdio, " in result.stdout
