"""Every provider file is judged by that provider's own SDK types, not by our idea of the shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sdk_check
from conftest import WEATHER, cli, write_specs
from sdk_check import assert_accepted, assert_typed_dict

RICH = {
    **WEATHER,
    "search_docs.json": {
        "title": "Search the docs",
        "description": "Full-text search with filters",
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["api", "guide"]}},
            },
            "required": ["query"],
        },
        "output_schema": {
            "type": "object",
            "properties": {"hits": {"type": "array", "items": {"type": "string"}}},
        },
        "examples": [{"query": "install"}, {"query": "auth", "limit": 3}],
        "strict": False,
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
}


@pytest.fixture(scope="module")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sdk")
    specs = write_specs(tmp / "specs", RICH)
    assert cli("build", str(specs), "--out", str(tmp / "out")).exit_code == 0
    return {p.stem: json.loads(p.read_text()) for p in (tmp / "out" / "schemas").glob("*.json")}


def test_gemini_single_wrapper_accepted_by_google_genai(schemas: dict[str, Any]) -> None:
    from google.genai import types

    gemini = schemas["gemini"]
    assert len(gemini) == 1 and list(gemini[0]) == ["functionDeclarations"]
    tool = types.Tool.model_validate(gemini[0])  # extra keys are forbidden by the SDK model
    names = [d.name for d in tool.function_declarations or []]
    assert names == ["get_weather", "now", "search_docs"]
    declarations = {d["name"]: d for d in gemini[0]["functionDeclarations"]}
    assert "parameters" not in declarations["now"]  # no-argument tool: no parameters key at all
    assert declarations["search_docs"]["parameters"] == RICH["search_docs.json"]["input_schema"]
    assert declarations["search_docs"]["response"] == RICH["search_docs.json"]["output_schema"]


def test_openai_chat_accepted_by_openai_types(schemas: dict[str, Any]) -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.shared_params import FunctionDefinition

    for entry in schemas["openai"]:
        assert_typed_dict(entry, ChatCompletionFunctionToolParam)
        assert_typed_dict(entry["function"], FunctionDefinition)
    by_name = {e["function"]["name"]: e["function"] for e in schemas["openai"]}
    assert "strict" not in by_name["get_weather"] and by_name["search_docs"]["strict"] is False
    assert by_name["now"]["parameters"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_openai_responses_always_states_strict(schemas: dict[str, Any]) -> None:
    from openai.types.responses import FunctionToolParam

    for entry in schemas["openai_responses"]:
        assert_typed_dict(entry, FunctionToolParam)
        assert entry["strict"] is False


def test_anthropic_accepted_by_anthropic_types(schemas: dict[str, Any]) -> None:
    from anthropic.types import ToolParam

    for entry in schemas["anthropic"]:
        assert_typed_dict(entry, ToolParam)
        assert entry["input_schema"]["type"] == "object"
    by_name = {e["name"]: e for e in schemas["anthropic"]}
    assert by_name["search_docs"]["input_examples"] == RICH["search_docs.json"]["examples"]
    assert "input_examples" not in by_name["now"]


def test_mcp_accepted_by_mcp_types_without_loss(schemas: dict[str, Any]) -> None:
    from mcp import types

    for entry in schemas["mcp"]:
        tool = types.Tool.model_validate(entry)
        assert tool.model_dump(by_alias=True, exclude_none=True, mode="json") == entry
    search = next(e for e in schemas["mcp"] if e["name"] == "search_docs")
    assert search["title"] == "Search the docs"
    assert search["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert "outputSchema" in search


def test_bedrock_accepted_by_botocore_converse_validation(schemas: dict[str, Any]) -> None:
    sdk_check.bedrock(schemas["bedrock"])  # botocore's own Converse request validation
    with pytest.raises(Exception, match="toolSpec"):  # and that validation does bite
        sdk_check.bedrock({"tools": [{"toolSpec": {"name": "x"}}]})


def test_tools_sorted_by_name_and_schema_verbatim(schemas: dict[str, Any]) -> None:
    schema = RICH["search_docs.json"]["input_schema"]
    assert [e["name"] for e in schemas["mcp"]] == ["get_weather", "now", "search_docs"]
    assert (
        next(e for e in schemas["anthropic"] if e["name"] == "search_docs")["input_schema"]
        == schema
    )
    assert list(schemas["bedrock"]["tools"][2]["toolSpec"]["inputSchema"]["json"]) == list(schema)


def test_seed_example_1_on_checked_in_weather_example() -> None:
    gemini = json.loads(
        (Path(__file__).parent.parent / "examples/weather/tools/schemas/gemini.json").read_text()
    )
    assert len(gemini) == 1
    declarations = gemini[0]["functionDeclarations"]
    assert len(declarations) == 2
    assert declarations[0]["name"] == "get_weather"
    assert declarations[0]["parameters"]["required"][0] == "city"


def test_target_subset(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    result = cli(
        "build", str(specs), "--out", str(tmp_path / "out"), "--target", "gemini", "--target", "mcp"
    )
    assert result.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "out/schemas").iterdir()) == [
        "gemini.json",
        "mcp.json",
        "tools.json",
    ]
    dispatch = (tmp_path / "out/dispatch.py").read_text()
    assert "def to_gemini" in dispatch and "def to_openai" not in dispatch
    assert "--target gemini --target mcp" in dispatch  # the regenerate command keeps the subset


def test_bare_json_schema_spec(tmp_path: Path) -> None:
    """An existing JSON Schema file is a spec: its description and examples describe the tool;
    `$schema`, `$id` and `examples` are not part of the emitted argument schema."""
    bare = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/schemas/lookup.json",
        "description": "Look a word up",
        "type": "object",
        "properties": {"word": {"type": "string"}, "lang": {"$ref": "#/$defs/Lang"}},
        "required": ["word"],
        "$defs": {"Lang": {"type": "string", "enum": ["en", "fr"]}},
        "examples": [{"word": "tool", "lang": "en"}],
    }
    specs = write_specs(tmp_path / "specs", {"lookup.json": bare})
    result = cli("build", str(specs), "--out", str(tmp_path / "out"))  # every target
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out/schemas"
    schemas = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert_accepted(schemas)
    anthropic = schemas["anthropic"][0]
    assert anthropic["name"] == "lookup" and anthropic["description"] == "Look a word up"
    assert anthropic["input_examples"] == [{"word": "tool", "lang": "en"}]
    emitted = anthropic["input_schema"]
    assert not {"$schema", "$id", "examples"} & set(emitted)
    assert emitted == {k: v for k, v in bare.items() if k not in ("$schema", "$id", "examples")}


def test_every_file_accepted_by_its_sdk(schemas: dict[str, Any]) -> None:
    assert set(schemas) >= {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"}
    assert_accepted(schemas)
