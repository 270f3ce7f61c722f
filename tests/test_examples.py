"""The checked-in examples run as a user would run them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

EXAMPLES = ROOT / "examples"


def python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env_free = {
        "OPENAI_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
        "GEMINI_API_KEY": "",
        "BEDROCK_MODEL_ID": "",
    }
    import os

    env = {**os.environ, **env_free}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_weather_demo() -> None:
    done = python("demo.py", cwd=EXAMPLES / "weather")
    assert done.returncode == 0, done.stderr
    assert "demo: all round trips and loops ok" in done.stdout


def test_agent_demo_edits_its_scratch_workspace() -> None:
    done = python("agent.py", cwd=EXAMPLES / "agent")
    assert done.returncode == 0, done.stderr
    assert "agent demo: ok" in done.stdout
    assert "error read        '../secret.txt' is outside the workspace" in done.stdout


def test_shop_demo_every_provider() -> None:
    done = python("demo.py", cwd=EXAMPLES / "shop")
    assert done.returncode == 0, done.stderr
    for provider in ("openai", "openai_responses", "anthropic", "gemini", "bedrock"):
        line = next(line for line in done.stdout.splitlines() if line.startswith(provider + " "))
        assert "4 turns; calls: search_products, get_product, add_to_cart, checkout" in line, line
    assert done.stdout.count("ORD-1001") == 5


def test_todo_demo_rest_tools_from_an_openapi_document() -> None:
    done = python("demo.py", cwd=EXAMPLES / "todo")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[2] == 'updateTodo: {"id": 1, "title": "Buy milk", "done": true, "due": "2026-06-01"}'
    )
    assert 'deleteTodo(99): HTTP 404: {"error": "no such to-do"}' in lines
    assert "demo-token" not in done.stdout + done.stderr  # the token stays in the environment
    assert lines[-1] == "todo demo: an OpenAPI document, four tools, no handler code"


def test_shop_served_over_mcp(tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    client.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            import anyio
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client

            async def main():
                params = StdioServerParameters(command=sys.executable, args=[{str(EXAMPLES / "shop" / "serve_mcp.py")!r}])
                async with stdio_client(params) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        listed = await session.list_tools()
                        product = await session.call_tool("get_product", {{"sku": "TEA-042"}})
                        missing = await session.call_tool("get_product", {{"sku": "NOPE"}})
                        print(json.dumps({{
                            "tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools],
                            "product": [product.is_error, product.structured_content],
                            "missing": [missing.is_error, missing.content[0].text],
                        }}))

            anyio.run(main)
            """
        )
    )
    done = python(str(client), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["tools"] == json.loads(
        (EXAMPLES / "shop/shop_tools/schemas/mcp.json").read_text()
    )
    assert answer["product"] == [
        False,
        {
            "sku": "TEA-042",
            "name": "Darjeeling green tea",
            "price": {"amount": 12.5, "currency": "EUR"},
            "in_stock": 40,
        },
    ]
    assert answer["missing"][0] is True and "NOPE" in answer["missing"][1]


@pytest.mark.parametrize(
    "script", ["pydantic_ai_agent.py", "openai_agents_sdk.py", "langgraph_tool_node.py"]
)
def test_framework_examples_call_retry_and_answer(script: str) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "frameworks" / script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Invalid arguments for tool 'get_weather': city: Field required" in out
    assert "handler: get_weather(city='Oslo')" in out
    assert "answer: " in out and "21C" in out.split("answer: ")[1]


def test_notes_demo_local_tool_and_mcp_server_in_one_toolkit() -> None:
    done = python("demo.py", cwd=EXAMPLES / "notes")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "read_note, an error the server reported: " in out and "no note titled 'boats'" in out
    assert "openai loop: 3 turns; calls: notes_search_notes, word_count, notes_read_note" in out
    assert "notes demo: one local tool and one MCP server in one toolkit" in out
