"""Tools snapshotted from MCP servers, called on their servers at run time through the generated
Toolkit: a stdio server and a streamable-HTTP one behind a bearer token, both started for real;
sessions counted server-side; every provider's round trip, a tool loop, an integration, and the
toolkit re-served as one MCP server (a gateway over local tools and two upstream servers)."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, build_in, cli
from mcp_helpers import (
    TOKEN,
    TOOLS,
    Upstream,
    calls,
    free_port,
    project,
    sessions,
    stdio,
    wait_for_port,
)

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

LOCAL = {"now.yaml": {"description": "Current time"}}
PACKAGE = "proxied_tools"  # a name no other test module imports


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream) -> Path:
    """A project whose specs are a local tool plus the snapshots of two servers: `wiki` (stdio)
    and `remote` (streamable HTTP, its token from the environment), built into PACKAGE."""
    folder = tmp_path_factory.mktemp("proxy")
    count = folder / "wiki-count"
    remote = {
        "url": upstream.url,
        "headers": {"Authorization": "Bearer ${UPSTREAM_TOKEN}"},
        "prefix": "r",
        "tools": ["add", "whoami", "slow"],
    }
    project(folder, {"wiki": stdio("--count", str(count)), "remote": remote}, LOCAL, PACKAGE)
    os.environ["UPSTREAM_TOKEN"] = TOKEN
    result = cli("sync", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    assert cli("build", cwd=folder).exit_code == 0
    return folder


@pytest.fixture(scope="module")
def pkg(synced: Path) -> Any:
    sys.path.insert(0, str(synced))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(synced))


class Handlers:
    def now(self, args: Any, ctx: Any) -> str:
        return "12:00"


@pytest.fixture(scope="module")
def tk(pkg: Any, synced: Path) -> Iterator[Any]:
    """One toolkit for the sync entry points: its sessions live on the runtime's one loop."""
    toolkit = pkg.Toolkit(Handlers(), mcp_config=synced / "mcp.json")
    yield toolkit
    toolkit.close()


def test_calls_reach_the_server_and_keep_what_it_said(tk: Any, synced: Path) -> None:
    count = synced / "wiki-count"
    added = tk.execute_sync("wiki_add", {"a": 1, "b": 2})
    assert (added.is_error, added.output, added.data) == (False, '{"sum": 3}', {"sum": 3})
    failed = tk.execute_sync("wiki_fail", {})
    assert (failed.is_error, failed.output) == (True, "upstream refused: no such page")
    found = tk.execute_sync("wiki_search-pages", {"query": "tea"})
    assert (found.output, found.data) == ('search-pages: {"query": "tea"}', None)
    # the model's mistakes are answered by the typed model, without a round trip
    bad = tk.execute_sync("wiki_search-pages", {"limit": 0})
    assert bad.is_error and "query: Field required" in bad.output and "limit" in bad.output
    assert calls(count)[-3:] == [
        'add {"a": 1, "b": 2}',
        "fail {}",
        'search-pages {"query": "tea"}',
    ]
    assert tk.execute_sync("now", {}).output == "12:00"
    # a result the SDK client refuses (it breaks the tool's outputSchema) is an error result
    broken = tk.execute_sync("wiki_add", {"a": 13, "b": 0})
    assert broken.is_error
    assert broken.output.startswith("MCP server 'wiki' failed tool 'add': RuntimeError: Invalid")
    # over streamable HTTP, with the token expanded from the environment at run time
    assert tk.execute_sync("r_whoami", {}).output == TOKEN
    assert tk.execute_sync("r_add", {"a": 2, "b": 2.5}).data == {"sum": 4.5}


def test_no_secret_reaches_the_generated_files(synced: Path) -> None:
    for path in [*(synced / PACKAGE).rglob("*"), *(synced / "specs").rglob("*")]:
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert "${UPSTREAM_TOKEN}" in (synced / "mcp.json").read_text()


def test_one_session_per_server_opened_on_first_use_and_reused(
    pkg: Any, synced: Path, upstream: Upstream
) -> None:
    count = synced / "wiki-count"
    before_wiki, before_remote = sessions(count), sessions(upstream.count)

    async def main() -> list[Any]:
        async with pkg.Toolkit(Handlers(), mcp_config=synced / "mcp.json") as toolkit:
            assert sessions(count) == before_wiki  # nothing opens before the first call
            first = [toolkit.execute("wiki_add", {"a": i, "b": 1}) for i in range(8)]
            first += [toolkit.execute("r_add", {"a": i, "b": 1}) for i in range(8)]
            results = await asyncio.gather(*first)  # concurrent first calls: one session each
            results += [await toolkit.execute("wiki_search-pages", {"query": "x"})]
            return results

    results = asyncio.run(main())
    assert not any(r.is_error for r in results), results
    assert [r.data["sum"] for r in results[:8]] == list(range(1, 9))
    assert sessions(count) == before_wiki + 1
    assert sessions(upstream.count) == before_remote + 1


def test_each_call_is_bounded_by_the_server_timeout(
    pkg: Any, synced: Path, upstream: Upstream
) -> None:
    config = json.loads((synced / "mcp.json").read_text())
    config["mcpServers"]["remote"]["timeout"] = 2
    toolkit = pkg.Toolkit(Handlers(), mcp_config=config)  # a dict works as well as a path
    before = sessions(upstream.count)
    assert toolkit.execute_sync("r_add", {"a": 1, "b": 1}).data == {"sum": 2}
    slow = toolkit.execute_sync("r_slow", {"seconds": 6})
    assert slow.is_error
    assert slow.output == "MCP server 'remote' did not answer tool 'slow' within 2 s"
    assert toolkit.execute_sync("r_add", {"a": 2, "b": 1}).data == {"sum": 3}
    assert sessions(upstream.count) == before + 1  # a slow call does not cost the session
    toolkit.close()


def test_calls_given_up_at_their_deadline_leave_no_thread_nor_task_behind(
    tk: Any, synced: Path
) -> None:
    """A call to an MCP tool is a coroutine on the runtime's loop, never a worker thread: given
    up at its deadline, its task is cancelled, the server is sent notifications/cancelled (its
    handler stops), and the session stays open for the next call. Twenty timeouts, from four
    caller threads at once, leave as many threads and tasks as there were."""
    from toolnexus_runtime import run_sync

    count = synced / "wiki-count"
    assert tk.execute_sync("wiki_add", {"a": 1, "b": 1}).data == {"sum": 2}  # session open
    opened = sessions(count)

    async def tasks() -> int:
        return len(asyncio.all_tasks())

    def cancelled() -> int:
        return count.read_text().count("cancelled slow\n")

    threads, before, stopped = threading.active_count(), run_sync(tasks()), cancelled()

    def give_up(_: int) -> str:
        return str(tk.execute_sync("wiki_slow", {"seconds": 60}, timeout=0.2).output)

    with ThreadPoolExecutor(4) as callers:
        outputs = set(callers.map(give_up, range(20)))
    assert outputs == {"Tool 'wiki_slow' did not finish within 0.2 seconds."}
    deadline = time.monotonic() + 10
    while cancelled() < stopped + 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cancelled() == stopped + 20  # the server was told, and stopped every one
    assert threading.active_count() <= threads
    assert run_sync(tasks()) <= before
    assert tk.execute_sync("wiki_add", {"a": 2, "b": 2}).data == {"sum": 4}
    assert sessions(count) == opened  # timeouts do not cost the session


def test_a_dead_session_is_reopened_once_and_a_call_cut_off_is_never_sent_twice(
    tk: Any, synced: Path
) -> None:
    count = synced / "wiki-count"
    pid = int(tk.execute_sync("wiki_whoami", {}).output.removeprefix("stdio, pid "))
    before = sessions(count)
    os.kill(pid, signal.SIGKILL)  # the server dies between calls: nothing was sent to it
    _wait_gone(pid)
    assert tk.execute_sync("wiki_add", {"a": 2, "b": 2}).data == {"sum": 4}
    assert sessions(count) == before + 1
    # the server dies while the call is out: it may have done its work (here it did: it
    # logged the call), so the call is not sent again; the next call opens a new session
    ran = len(calls(count))
    crashed = tk.execute_sync("wiki_crash", {})
    assert crashed.is_error
    assert crashed.output == (
        "MCP server 'wiki' closed the connection while tool 'crash' was running: it may or may "
        "not have run, so it is not sent again (the next call opens a new session)"
    )
    assert calls(count)[ran:] == ["crash {}"]  # once
    assert sessions(count) == before + 1
    assert tk.execute_sync("wiki_add", {"a": 1, "b": 2}).data == {"sum": 3}
    assert sessions(count) == before + 2


def _wait_gone(pid: int) -> None:
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def test_every_round_trip_runs_proxied_calls(tk: Any) -> None:
    gemini = tk.gemini_reply(
        [{"functionCall": {"id": "g1", "name": "wiki_add", "args": {"a": 1, "b": 2}}}]
    )
    response = gemini["parts"][0]["functionResponse"]
    assert (response["id"], response["name"]) == ("g1", "wiki_add")
    assert "3" in json.dumps(response["response"])
    call = {"id": "o1", "type": "function"}
    call["function"] = {"name": "r_add", "arguments": '{"a": 1, "b": 1}'}
    assert tk.openai_tool_messages({"tool_calls": [call]}) == [
        {"role": "tool", "tool_call_id": "o1", "content": '{"sum": 2}'}
    ]
    item = {"type": "function_call", "call_id": "r1", "name": "wiki_add"}
    item["arguments"] = '{"a": 2, "b": 2}'
    (output,) = tk.openai_responses_outputs([item])
    assert (output["call_id"], output["output"]) == ("r1", '{"sum": 4}')
    anthropic = tk.anthropic_tool_results(
        [{"type": "tool_use", "id": "a1", "name": "wiki_fail", "input": {}}]
    )
    assert anthropic[0]["is_error"] is True
    assert "upstream refused" in json.dumps(anthropic[0]["content"])
    bedrock = tk.bedrock_tool_results(
        [{"toolUse": {"toolUseId": "b1", "name": "r_whoami", "input": {}}}]
    )
    assert bedrock[0]["toolResult"]["toolUseId"] == "b1"
    assert bedrock[0]["toolResult"]["status"] == "success"
    assert TOKEN in json.dumps(bedrock[0]["toolResult"]["content"])


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_tool_loop_calls_local_and_proxied_tools(tk: Any, provider: str) -> None:
    turns: list[scripted.Turn] = [
        [("c1", "wiki_add", {"a": 20, "b": 1}), ("c2", "now", {})],
        "21 at 12:00.",
    ]
    client, _recorder = scripted.client_for(provider, turns)
    start: dict[str, Any] = {
        "openai": {"model": "m", "messages": [{"role": "user", "content": "go"}]},
        "anthropic": {"model": "m", "messages": [{"role": "user", "content": "go"}]},
        "gemini": {"model": "m", "contents": "go"},
    }[provider]
    if provider == "anthropic":
        start["max_tokens"] = 100
    run = getattr(tk, f"run_{provider}")(client, **start)
    assert [(call.name, result.output) for call, result in run.tool_calls] == [
        ("wiki_add", '{"sum": 21}'),
        ("now", "12:00"),
    ]


def test_an_integration_calls_a_proxied_tool(tk: Any) -> None:
    from toolnexus_runtime.integrations import langchain_tools

    (add,) = [t for t in langchain_tools(tk) if t.name == "wiki_add"]
    message = add.invoke(
        {"type": "tool_call", "id": "lc1", "name": "wiki_add", "args": {"a": 5, "b": 5}}
    )
    assert (message.tool_call_id, message.content) == ("lc1", '{"sum": 10}')


def test_made_with_a_clear_error_when_a_server_cannot_be_reached(
    pkg: Any, synced: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match=r"mcp_config="):
        pkg.Toolkit(Handlers())
    config = json.loads((synced / "mcp.json").read_text())
    del config["mcpServers"]["remote"]
    with pytest.raises(ValueError, match=r"server 'remote', which mcp_config does not list"):
        pkg.Toolkit(Handlers(), mcp_config=config)
    monkeypatch.setenv("UPSTREAM_TOKEN", f"{TOKEN}\n")  # read from a file, newline and all
    with pytest.raises(ValueError) as info:
        pkg.Toolkit(Handlers(), mcp_config=synced / "mcp.json")
    assert "variable UPSTREAM_TOKEN (in headers) holds a control character" in str(info.value)
    assert TOKEN not in str(info.value)
    monkeypatch.delenv("UPSTREAM_TOKEN")
    with pytest.raises(ValueError, match=r"variable UPSTREAM_TOKEN \(in headers\) is not set"):
        pkg.Toolkit(Handlers(), mcp_config=synced / "mcp.json")


def test_an_unreachable_or_disabled_server_is_an_error_result(
    pkg: Any, synced: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = json.loads((synced / "mcp.json").read_text())
    config["mcpServers"]["wiki"] = {"command": str(synced / "no-such-server")}
    config["mcpServers"]["remote"]["enabled"] = False
    toolkit = pkg.Toolkit(Handlers(), mcp_config=config)
    missing = toolkit.execute_sync("wiki_add", {"a": 1, "b": 1})
    assert missing.is_error and missing.output.startswith(
        "MCP server 'wiki' is unavailable: could not start"
    )
    off = toolkit.execute_sync("r_add", {"a": 1, "b": 1})
    assert off.output == "MCP server 'remote' is disabled (enabled: false)"
    assert toolkit.execute_sync("now", {}).output == "12:00"  # local tools are unaffected


def test_a_masking_server_hides_why_a_source_failed_but_not_what_the_tool_said(
    pkg: Any, synced: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Over HTTP (mask_errors) an upstream's failure names internal commands and hosts: the
    client gets an error id and the log the text. What the upstream tool answered (isError) and
    a handler's ToolError are answers, and pass as they are."""
    from mcp import types
    from toolnexus_runtime.mcp import mcp_server

    config = json.loads((synced / "mcp.json").read_text())
    config["mcpServers"]["remote"] = {"command": "/opt/internal/bin/crm-server", "timeout": 5}

    async def main(server: Any) -> list[str]:
        entry = server._request_handlers["tools/call"]
        call_tool = getattr(entry, "handler", None) or entry[1]
        ctx = type("C", (), {"request_id": 1})()
        said = []
        for name, arguments in (("r_add", {"a": 1, "b": 1}), ("wiki_fail", {})):
            params = types.CallToolRequestParams(name=name, arguments=arguments)
            result = await call_tool(ctx, params)
            assert result.is_error
            said.append(result.content[0].text)
        return said

    toolkit = pkg.Toolkit(Handlers(), mcp_config=config)
    with caplog.at_level(logging.ERROR, logger="toolnexus_runtime"):
        masked, answered = asyncio.run(main(mcp_server(toolkit, mask_errors=True)))
    (record,) = [r for r in caplog.records if r.__dict__.get("tool_name") == "r_add"]
    error_id = record.__dict__["error_id"]
    assert (
        masked == f"Tool 'r_add' failed (error id {error_id}). The details are in the server's log."
    )
    assert "/opt/internal/bin/crm-server" in record.getMessage()
    assert answered == "upstream refused: no such page"
    unmasked, _ = asyncio.run(main(mcp_server(toolkit)))
    assert unmasked.startswith("MCP server 'remote' is unavailable: could not start")


def test_a_server_that_pages_without_end_costs_its_timeout_and_is_unavailable(
    pkg: Any, synced: Path
) -> None:
    timeout = 8.0  # the set-up (a Python process importing the SDK) must fit in it
    config = json.loads((synced / "mcp.json").read_text())
    wiki = config["mcpServers"]["wiki"]
    results = []
    start = time.perf_counter()
    for pages in (["--cursor", "endless", "--delay", "0.3"], ["--cursor", "loop"]):
        config["mcpServers"]["wiki"] = {**wiki, "args": wiki["args"] + pages, "timeout": timeout}
        toolkit = pkg.Toolkit(Handlers(), mcp_config=config)
        results.append(toolkit.execute_sync("wiki_add", {"a": 1, "b": 1}))
        if not results[1:]:
            endless = time.perf_counter() - start
        toolkit.close()
    elapsed = time.perf_counter() - start
    assert results[0].output.startswith(f"MCP server 'wiki' did not answer within {timeout:g} s")
    assert results[1].output == (
        "MCP server 'wiki' is unavailable: tools/list sent cursor 'again' twice"
    )
    assert timeout - 0.5 < endless < timeout + 1.5, endless  # the call's timeout in all
    assert elapsed < timeout + 12, elapsed  # closing the pager at once; the loop's session


def test_too_many_pages_or_tools_make_the_server_unavailable(
    pkg: Any, synced: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolnexus_runtime.executors.mcp_session as proxy

    monkeypatch.setattr(proxy, "MAX_PAGES", 5)
    config = json.loads((synced / "mcp.json").read_text())
    wiki = config["mcpServers"]["wiki"]
    outputs = []
    for pages, tools in ((["--cursor", "endless", "--page", "2"], 6), (["--page", "2"], 5)):
        monkeypatch.setattr(proxy, "MAX_TOOLS", tools)
        config["mcpServers"]["wiki"] = {**wiki, "args": wiki["args"] + pages}
        with pkg.Toolkit(Handlers(), mcp_config=config) as toolkit:
            outputs.append(toolkit.execute_sync("wiki_add", {"a": 1, "b": 1}).output)
    assert outputs == [
        "MCP server 'wiki' is unavailable: tools/list did not end after 5 pages",
        "MCP server 'wiki' is unavailable: tools/list sent more than 5 tools",
    ]


def test_a_huge_result_is_cut_or_refused_at_the_output_limit(pkg: Any, synced: Path) -> None:
    config = json.loads((synced / "mcp.json").read_text())
    wiki = config["mcpServers"]["wiki"]
    config["mcpServers"]["wiki"] = {**wiki, "args": wiki["args"] + ["--huge", "5000000"]}
    with pkg.Toolkit(Handlers(), mcp_config=config, output_limit=1000) as toolkit:
        text = toolkit.execute_sync("wiki_search-pages", {"query": "tea"})
        failed = toolkit.execute_sync("wiki_fail", {})
        data = toolkit.execute_sync("wiki_add", {"a": 1, "b": 1})
    note = "\n\n[output cut: 1000 of 5000000 characters shown]"
    assert (text.is_error, text.output) == (False, "y" * 1000 + note)
    assert (failed.is_error, failed.output) == (True, "y" * 1000 + note)
    assert data.is_error and data.data is None
    assert data.output == (
        "The tool's structured result is over 1000 characters (the toolkit's output_limit), so "
        "it was not used: ask for less (a narrower query, a smaller page), or raise "
        "Toolkit(output_limit=...)."
    )
    with pytest.raises(ValueError, match=r"output_limit must be a positive integer, not 0"):
        pkg.Toolkit(Handlers(), mcp_config=config, output_limit=0)


def test_a_tool_gone_upstream_is_logged_when_the_session_opens(
    pkg: Any, synced: Path, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    with upstream.serving([t for t in TOOLS if t["name"] != "whoami"]):
        toolkit = pkg.Toolkit(Handlers(), mcp_config=synced / "mcp.json")
        with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
            result = toolkit.execute_sync("r_whoami", {})
        toolkit.close()
    assert "MCP server 'remote' does not list 'whoami' any more" in caplog.text
    assert "toolnexus-gen sync --check" in caplog.text
    assert not result.is_error  # the server still answers it: the call is not blocked


GATEWAY = textwrap.dedent(
    """
    import os
    from toolnexus_runtime.mcp import asgi_app
    from proxied_tools import Toolkit, ToolHandlers

    class Handlers(ToolHandlers):
        def now(self, args, ctx):
            return "12:00"

    app = asgi_app(Toolkit(Handlers(), mcp_config=os.environ["GATEWAY_MCP_CONFIG"]))
    """
)


def test_a_gateway_serves_local_and_upstream_tools_as_one_mcp_server(
    synced: Path, tmp_path: Path
) -> None:
    (tmp_path / "gateway.py").write_text(GATEWAY)
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(synced)]),
        "GATEWAY_MCP_CONFIG": str(synced / "mcp.json"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "gateway:app", "--host", "127.0.0.1"]
        + ["--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)

        async def client() -> tuple[Any, list[Any]]:
            from mcp import Client

            async with Client(f"http://127.0.0.1:{port}/mcp") as session:
                listed = await session.list_tools()
                results = [
                    await session.call_tool("wiki_add", {"a": 1, "b": 2}),
                    await session.call_tool("r_whoami", {}),
                    await session.call_tool("now", {}),
                    await session.call_tool("wiki_fail", {}),
                    await session.call_tool("wiki_add", {"a": "one"}),
                ]
                return listed, results

        listed, (added, whoami, now, failed, invalid) = asyncio.run(client())
    finally:
        process.terminate()
        process.wait(20)
    mcp_json = json.loads((synced / PACKAGE / "schemas/mcp.json").read_text())
    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools] == mcp_json
    assert {"now", "wiki_add", "r_whoami"} <= {t["name"] for t in mcp_json}
    assert (added.structured_content, added.is_error) == ({"sum": 3}, False)
    assert whoami.content[0].text == TOKEN
    assert now.content[0].text == "12:00"
    assert failed.is_error and failed.content[0].text == "upstream refused: no such page"
    assert invalid.is_error and "a: Input should be a valid number" in invalid.content[0].text


def test_a_package_without_mcp_tools_never_needs_mcp_config(tmp_path: Path) -> None:
    pkg = build_in(tmp_path, LOCAL)
    assert pkg.Toolkit(Handlers()).execute_sync("now", {}).output == "12:00"


def test_run_time_secrets_are_hidden_in_their_escaped_forms_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolnexus_runtime.executors.mcp import settings_for

    token = 'tok-\u00e9t\u00e9-"quoted"-9'
    monkeypatch.setenv("T", token)
    entry = {"url": "http://h/mcp", "headers": {"A": "Bearer ${T}"}, "_base": Path.cwd()}
    settings = settings_for("mcp.json", "s", entry)
    for said in (token, repr(token), repr(f"Bearer {token}".encode()), json.dumps(token)):
        hidden = settings.hide(f"Illegal header value {said}")
        assert "quoted" not in hidden and "***" in hidden, hidden
