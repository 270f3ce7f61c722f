"""The MCP proxy's pieces that need no server: reading mcp_config, `${VAR}` expansion without
ever showing a value, and a CallToolResult becoming what the model sees. (Calls against real
servers are in the repository's tests/test_mcp_proxy.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as types
import pytest
from pydantic import BaseModel

from toolnexus_runtime import ToolError, Toolkit, ToolResult, ToolSpec
from toolnexus_runtime.content import Image, Resource, ResourceLink, Text
from toolnexus_runtime.executors.mcp import read_config, settings_for, to_result


class Args(BaseModel):
    a: float


def test_a_path_or_a_dict_and_where_each_mistake_is(tmp_path: Path) -> None:
    good = {"servers": {"w": {"command": ["python", "s.py"], "args": ["-v"], "cwd": "sub"}}}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(good))
    where, servers = read_config(path)
    settings = settings_for(where, "w", servers["w"])
    assert settings.command == ("python", "s.py", "-v")
    assert settings.cwd == str(tmp_path / "sub")  # relative to the file
    assert settings.timeout == 30.0 and settings.enabled
    path.write_text('{"mcpServers": {"w": {"command": "x",}}}')
    with pytest.raises(ValueError, match=r"mcp.json:1:38: invalid JSON"):
        read_config(path)
    with pytest.raises(ValueError, match=r"unknown key 'comand'"):
        read_config({"mcpServers": {"w": {"comand": "x"}}})
    with pytest.raises(ValueError, match=r"either a command or a url"):
        read_config({"mcpServers": {"w": {"env": {}}}})
    with pytest.raises(ValueError, match=r"no mcpServers"):
        read_config({"tools": []})
    with pytest.raises(ValueError, match=r"cannot read"):
        read_config(tmp_path / "missing.json")
    _, servers = read_config({"mcpServers": {"w": {"url": "http://h", "timeout": 0}}})
    with pytest.raises(ValueError, match=r"timeout must be a number of seconds"):
        settings_for("mcp_config", "w", servers["w"])


def test_variables_are_expanded_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_TOKEN", "s3cret-token-value")
    monkeypatch.delenv("NOT_SET", raising=False)
    entry = {
        "url": "https://h/mcp?key=${API_TOKEN}",
        "headers": {"Authorization": "Bearer ${API_TOKEN}", "X-Region": "${REGION:-eu}"},
    }
    _, servers = read_config({"mcpServers": {"r": entry}})
    settings = settings_for("mcp_config", "r", servers["r"])
    assert settings.url == "https://h/mcp?key=s3cret-token-value"
    assert settings.headers == {"Authorization": "Bearer s3cret-token-value", "X-Region": "eu"}
    said = settings.hide(f"could not connect to {settings.url}")
    assert "s3cret" not in said and said == "could not connect to https://h/mcp?key=***"
    _, servers = read_config({"mcpServers": {"r": {"url": "https://h/${NOT_SET}"}}})
    with pytest.raises(ValueError, match=r"variable NOT_SET \(in url\) is not set") as caught:
        settings_for("mcp_config", "r", servers["r"])
    assert "s3cret" not in str(caught.value)
    _, servers = read_config({"mcpServers": {"r": {"url": "${NOT_SET}", "enabled": False}}})
    assert not settings_for("mcp_config", "r", servers["r"]).enabled  # needs none of its variables
    _, servers = read_config({"mcpServers": {"r": {"command": "x", "args": ["${input:k}"]}}})
    with pytest.raises(ValueError, match=r"not an environment variable reference"):
        settings_for("mcp_config", "r", servers["r"])


def result(**fields: Any) -> types.CallToolResult:
    return types.CallToolResult.model_validate(fields)


def test_what_the_server_said_is_kept() -> None:
    text = [{"type": "text", "text": "line one"}, {"type": "text", "text": "line two"}]
    assert to_result(result(content=text)) == "line one\nline two"
    structured = to_result(result(content=text[:1], structuredContent={"n": 1}))
    assert structured == ToolResult("line one", False, {"n": 1})
    bare = to_result(result(content=[], structuredContent={"n": 1}))
    assert bare == ToolResult('{"n": 1}', False, {"n": 1})
    with pytest.raises(ToolError, match=r"^no such page$"):
        to_result(result(content=[{"type": "text", "text": "no such page"}], isError=True))
    with pytest.raises(ToolError, match=r"without a message"):
        to_result(result(content=[], isError=True))
    mixed = [
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
        {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
    ]
    kept = to_result(result(content=mixed))
    assert isinstance(kept, ToolResult)  # the image's bytes, not "[image image/png]"
    assert kept.content == (
        Image(b"hi", "image/png"),
        Resource("file:///a.txt", text="inside"),
        ResourceLink("file:///b.txt", "b"),
    )
    assert kept.output == (
        "[image: image/png, 2 bytes]\n[resource file:///a.txt]\ninside\n"
        "[resource link file:///b.txt: b]"
    )
    broken = to_result(result(content=[{"type": "image", "data": "@@", "mimeType": "image/png"}]))
    assert broken == "[image: image/png, data that is not valid base64]"


def test_a_result_over_the_limit_is_cut_or_refused() -> None:
    parts = [{"type": "text", "text": "abcdef"}, {"type": "text", "text": "ghij"}]
    assert to_result(result(content=parts), 11) == "abcdef\nghij"
    assert to_result(result(content=parts), 4) == ("abcd\n\n[output cut: 4 of 11 characters shown]")
    fits = to_result(result(content=[], structuredContent={"k": "abcd"}), 13)
    assert fits == ToolResult('{"k": "abcd"}', False, {"k": "abcd"})
    with pytest.raises(ToolError, match=r"^The tool's structured result is over 12 characters"):
        to_result(result(content=[], structuredContent={"k": "abcd"}), 12)


def test_text_beside_media_is_cut_at_the_limit_and_the_media_kept() -> None:
    parts = [
        {"type": "text", "text": "abcdef"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "text", "text": "ghij"},
    ]
    kept = to_result(result(content=parts), 8)
    assert isinstance(kept, ToolResult)
    assert kept.content == (
        Text("abcdef"),
        Image(b"hi", "image/png"),
        Text("gh"),
        Text("[output cut: 8 of 10 characters of text shown]"),
    )


def test_a_table_with_mcp_tools_needs_mcp_config() -> None:
    tools = {"w_add": ToolSpec("w_add", Args, None, {"mcp": {"server": "w", "tool": "add"}})}
    with pytest.raises(ValueError, match=r"tool 'w_add' comes from the MCP server 'w'"):
        Toolkit(object(), tools=tools)
    with pytest.raises(ValueError, match=r"which mcp_config does not list \(it lists: v\)"):
        Toolkit(object(), tools=tools, mcp_config={"mcpServers": {"v": {"command": "x"}}})
    tk = Toolkit(object(), tools=tools, mcp_config={"mcpServers": {"w": {"command": "x"}}})
    assert tk.execute_sync("w_add", {"a": "no"}).is_error  # validated here: nothing started
    tk.close()
