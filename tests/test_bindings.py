"""Tools that are not handler methods: a spec's `source` becomes the tool's binding, the
handler interface leaves it out, and the runtime's executor of that kind runs it through the
same `execute` path (validation, errors, hooks) as any handler."""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from conftest import WEATHER, cli, write_specs
from pydantic import BaseModel
from toolnexus_runtime import ToolContext, ToolError, executors

UPSTREAM = {
    **WEATHER,
    "search.yaml": {
        "description": "Search the wiki (served by an MCP server)",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
        "source": {"mcp": {"server": "wiki", "tool": "search-pages"}},
    },
}


class Recorder:
    """A stand-in executor of kind `mcp`: records what it is asked to run."""

    def __init__(self, toolkit: Any, options: executors.SourceOptions) -> None:
        self.options = options
        self.calls: list[tuple[str, dict[str, Any], str | None]] = []
        self.closed = 0
        made.append(self)

    def bind(self, spec: Any) -> Any:
        server, tool = spec.binding["mcp"]["server"], spec.binding["mcp"]["tool"]

        async def run(args: BaseModel, ctx: ToolContext) -> Any:
            self.calls.append((f"{server}/{tool}", args.model_dump(exclude_none=True), ctx.call_id))
            if args.model_dump().get("query") == "boom":
                raise ToolError("upstream said no")
            return {"hits": [args.model_dump()["query"]]}

        return run

    async def aclose(self) -> None:
        self.closed += 1


made: list[Recorder] = []


@pytest.fixture
def recorder_kind(monkeypatch: pytest.MonkeyPatch) -> list[Recorder]:
    module = types.ModuleType("fake_mcp_executor")
    module.executor = Recorder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_mcp_executor", module)
    monkeypatch.setitem(executors.KINDS, "mcp", "fake_mcp_executor")
    made.clear()
    return made


class Handlers:
    def get_weather(self, args: Any, ctx: ToolContext) -> str:
        return f"{args.city}: sunny"

    def now(self, args: Any, ctx: ToolContext) -> str:
        return "12:00"


def test_a_bound_tool_has_no_handler_method_and_runs_through_its_executor(
    build_package: Any, recorder_kind: list[Recorder]
) -> None:
    pkg = build_package(UPSTREAM)
    assert not hasattr(pkg.ToolHandlers, "search")
    assert pkg.TOOLS["search"].method is None
    assert pkg.TOOLS["search"].binding == {"mcp": {"server": "wiki", "tool": "search-pages"}}
    assert pkg.TOOLS["now"].binding is None

    tk = pkg.Toolkit(Handlers(), mcp_config={"mcpServers": {}})
    (executor,) = recorder_kind
    assert executor.options.mcp_config == {"mcpServers": {}}
    ok = tk.execute_sync("search", {"query": "tea"}, ToolContext(call_id="c1"))
    assert (ok.is_error, ok.data) == (False, {"hits": ["tea"]})
    # the model's mistakes are answered by the typed model, without reaching the source
    bad = tk.execute_sync("search", {"limit": "many"})
    assert bad.is_error and "query" in bad.output and "limit" in bad.output
    no = tk.execute_sync("search", {"query": "boom"})
    assert (no.is_error, no.output) == (True, "upstream said no")
    assert executor.calls == [
        ("wiki/search-pages", {"query": "tea"}, "c1"),
        ("wiki/search-pages", {"query": "boom"}, None),
    ]
    # every entry point serves it: a provider round trip
    replies = tk.openai_tool_messages(
        {
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"query": "x"}'},
                }
            ]
        }
    )
    assert replies == [{"role": "tool", "tool_call_id": "t1", "content": '{"hits": ["x"]}'}]
    tk.close()
    assert executor.closed == 1


def test_async_with_closes_the_executors(build_package: Any, recorder_kind: list[Recorder]) -> None:
    pkg = build_package(UPSTREAM)

    async def main() -> None:
        async with pkg.Toolkit(Handlers()) as tk:
            result = await tk.execute("search", {"query": "a"})
            assert result.data == {"hits": ["a"]}

    asyncio.run(main())
    assert recorder_kind[0].closed == 1


def test_a_kind_the_runtime_does_not_know_fails_when_the_toolkit_is_made(
    build_package: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = build_package(UPSTREAM)
    monkeypatch.delitem(executors.KINDS, "mcp", raising=False)
    with pytest.raises(TypeError, match="cannot run tools of kind 'mcp'"):
        pkg.Toolkit(Handlers())


def test_handlers_and_scaffold_leave_bound_tools_out(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", UPSTREAM)
    assert cli("build", "specs", "--out", "tools", cwd=tmp_path).exit_code == 0
    handlers = (tmp_path / "tools/handlers.py").read_text()
    assert "def get_weather" in handlers and "def search" not in handlers
    assert "SearchArgs" not in handlers  # no unused import
    dispatch = (tmp_path / "tools/dispatch.py").read_text()
    assert 'binding={"mcp": {"server": "wiki", "tool": "search-pages"}}' in dispatch
    result = cli(
        "scaffold", "my_handlers.py", "--specs", str(specs), "--out", "tools", cwd=tmp_path
    )
    assert result.exit_code == 0, result.output
    scaffolded = (tmp_path / "my_handlers.py").read_text()
    assert "def get_weather" in scaffolded and "def search" not in scaffolded


def test_a_package_of_bound_tools_only(build_package: Any, recorder_kind: list[Recorder]) -> None:
    pkg = build_package({"search.yaml": UPSTREAM["search.yaml"]})
    tk = pkg.Toolkit(pkg.ToolHandlers())  # nothing to implement
    assert tk.execute_sync("search", {"query": "q"}).data == {"hits": ["q"]}


def test_a_binding_change_rebuilds_dispatch(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", UPSTREAM)
    assert cli("build", "specs", "--out", "tools", cwd=tmp_path).exit_code == 0
    moved = {
        **UPSTREAM["search.yaml"],
        "source": {"mcp": {"server": "wiki2", "tool": "search-pages"}},
    }
    write_specs(tmp_path / "specs", {"search.yaml": moved})
    assert cli("build", "specs", "--out", "tools", cwd=tmp_path).exit_code == 0
    assert '"server": "wiki2"' in (tmp_path / "tools/dispatch.py").read_text()
    assert cli("build", "specs", "--out", "tools", "--check", cwd=tmp_path).exit_code == 0


def test_a_malformed_source_is_a_located_error(tmp_path: Path) -> None:
    write_specs(
        tmp_path / "specs", {"s.yaml": {"description": "d", "source": {"mcp": {"server": "x"}}}}
    )
    result = cli("build", "specs", "--out", "tools", cwd=tmp_path)
    assert result.exit_code == 2
    assert "s.yaml:" in result.stderr and "tool" in result.stderr
    assert not (tmp_path / "tools").exists()
