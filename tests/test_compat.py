"""Provider compatibility: cross-file $ref bundling, Gemini inlining, transforms, cross-tool limits,
and no false alarms on the real tool schemas of public MCP servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in, cli, write_specs
from sdk_check import assert_accepted

from toolnexus_gen.toolspec.bundle import has_refs

FIXTURES = Path(__file__).parent / "fixtures" / "mcp"
SHARED = {
    "_types.yaml": {
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["city"],
            },
            "Money": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "currency": {"$ref": "#/$defs/Currency"},
                },
                "required": ["amount", "currency"],
            },
            "Currency": {"type": "string", "enum": ["EUR", "USD"]},
        }
    },
    "create_order.yaml": {
        "description": "Create an order",
        "input_schema": {
            "type": "object",
            "properties": {
                "ship_to": {"$ref": "_types.yaml#/$defs/Address"},
                "total": {"$ref": "_types.yaml#/$defs/Money"},
                "note": {"$ref": "#/$defs/Note"},
            },
            "required": ["ship_to", "total"],
            "$defs": {"Note": {"type": "string", "maxLength": 200}},
        },
    },
}


def schemas_of(out: Path) -> dict[str, Any]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}


def test_cross_file_refs_are_bundled_into_defs_and_inlined_for_gemini(tmp_path: Path) -> None:
    pkg = build_in(tmp_path, SHARED)
    out = Path(pkg.__file__).parent
    schemas = schemas_of(out)
    assert_accepted(schemas)

    parameters = schemas["openai"][0]["function"]["parameters"]
    assert parameters["properties"]["ship_to"] == {"$ref": "#/$defs/Address"}
    assert parameters["properties"]["note"] == {"$ref": "#/$defs/Note"}  # local refs unchanged
    assert set(parameters["$defs"]) == {"Note", "Address", "Money", "Currency"}
    assert parameters["$defs"]["Money"]["properties"]["currency"] == {"$ref": "#/$defs/Currency"}
    assert "_types.yaml" not in json.dumps(schemas)  # no file refs left anywhere

    gemini = schemas["gemini"][0]["functionDeclarations"][0]["parameters"]
    assert not has_refs(gemini) and "$defs" not in gemini
    assert gemini["properties"]["total"]["properties"]["currency"]["enum"] == ["EUR", "USD"]

    # The models come from the bundled schema and validate like it.
    args = pkg.CreateOrderArgs.model_validate(
        {"ship_to": {"city": "Oslo"}, "total": {"amount": 3, "currency": "EUR"}}
    )
    assert args.ship_to.city == "Oslo"
    with pytest.raises(Exception, match="currency"):
        pkg.CreateOrderArgs.model_validate(
            {"ship_to": {"city": "Oslo"}, "total": {"amount": 3, "currency": "GBP"}}
        )


def test_editing_a_shared_file_makes_check_fail(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", SHARED)
    out = tmp_path / "out"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    shared = specs / "_types.yaml"
    shared.write_text(shared.read_text().replace("- USD", "- USD\n        - GBP"))
    result = cli("build", str(specs), "--out", str(out), "--check")
    assert result.exit_code == 1
    assert "GBP" in result.output


def test_cycle_across_files_is_named_for_gemini_and_kept_for_others(tmp_path: Path) -> None:
    specs = write_specs(
        tmp_path / "specs",
        {
            "_a.yaml": {"type": "object", "properties": {"b": {"$ref": "_b.yaml"}}},
            "_b.yaml": {"type": "object", "properties": {"a": {"$ref": "_a.yaml"}}},
            "walk.yaml": {
                "description": "Walk",
                "input_schema": {"type": "object", "properties": {"start": {"$ref": "_a.yaml"}}},
            },
        },
    )
    result = cli("build", str(specs), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "error[TN315]" in result.stderr
    assert "_a.yaml# -> " in result.stderr and "_b.yaml#" in result.stderr
    ok = cli("build", str(specs), "--out", str(tmp_path / "out2"), "--target", "openai")
    assert ok.exit_code == 0, ok.stderr
    parameters = json.loads((tmp_path / "out2/schemas/openai.json").read_text())[0]["function"][
        "parameters"
    ]
    assert set(parameters["$defs"]) == {"a", "b"}


def test_transforms_before_and_after(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.gemini]\ntransforms = ["strip_meta", "const_to_enum", "nullable"]\n'
        '[tool.toolnexus-gen.openai]\ntransforms = ["inline_refs"]\n'
    )
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "mode": {"const": "fast", "description": "always fast"},
            "when": {"type": ["string", "null"]},
            "count": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
            "tag": {"$ref": "#/$defs/Tag", "description": "a tag"},
        },
        "$defs": {"Tag": {"type": "string", "maxLength": 10}},
    }
    specs = write_specs(
        tmp_path / "specs", {"pick.json": {"description": "p", "input_schema": schema}}
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    schemas = schemas_of(tmp_path / "out")
    assert_accepted(schemas)
    gemini = schemas["gemini"][0]["functionDeclarations"][0]["parameters"]
    assert "$schema" not in gemini
    assert gemini["properties"]["mode"] == {
        "description": "always fast",
        "enum": ["fast"],
        "type": "string",
    }
    assert gemini["properties"]["when"] == {"type": "string", "nullable": True}
    assert gemini["properties"]["count"] == {"type": "integer", "minimum": 0, "nullable": True}
    assert gemini["properties"]["tag"] == {
        "type": "string",
        "maxLength": 10,
        "description": "a tag",
    }
    openai = schemas["openai"][0]["function"]["parameters"]
    assert openai["properties"]["tag"] == gemini["properties"]["tag"] and "$defs" not in openai
    assert openai["properties"]["mode"] == schema["properties"]["mode"]  # not a gemini transform
    assert schemas["mcp"][0]["inputSchema"] == schema  # targets without transforms: verbatim
    assert specs.is_dir()


def test_openai_and_gemini_tool_count_limits(tmp_path: Path) -> None:
    many = {f"t{i:03}.yaml": {"description": f"tool {i}"} for i in range(129)}
    specs = write_specs(tmp_path / "specs", many)
    # Without toolsets every request sends them all: an error, pointing at the 129th tool.
    result = cli("build", str(specs), "--out", str(tmp_path / "out"), "--target", "openai")
    assert result.exit_code == 2
    assert "t128.yaml" in result.stderr and "error[TN330]" in result.stderr
    assert "129 tools" in result.stderr and not (tmp_path / "out").exists()
    gemini = cli("build", str(specs), "--out", str(tmp_path / "o2"), "--target", "gemini")
    assert gemini.exit_code == 0 and "TN318" not in gemini.stderr  # 129 <= 512


def test_anthropic_strict_request_limits(tmp_path: Path) -> None:
    strict = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "page": {"type": "integer"},
            "size": {"type": "integer"},
        },
        "required": ["q"],
        "additionalProperties": False,
    }
    specs = {
        f"s{i:02}.json": {"description": "s", "input_schema": strict, "strict": True}
        for i in range(21)
    }
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=tmp_path)
    assert result.exit_code == 0  # per-request limits: warnings, since a request may send fewer
    assert "warning[TN355]" in result.stderr
    assert "21 strict tools" in result.stderr
    # two optional parameters each: the 13th strict tool takes the request past 24
    assert "s12.json" in result.stderr and "26 optional" in result.stderr


def test_explain_prints_a_rules_provider_text_and_fix() -> None:
    result = cli("explain", "tn316")
    assert result.exit_code == 0
    assert 'Unknown name "additionalProperties"' in result.output
    assert "parametersJsonSchema" in result.output
    from toolnexus_gen.targets.rules import RULES

    for code, rule in RULES.items():
        assert code.startswith(("TN3", "TN46")) and rule.provider_error and rule.fix


def mcp_sample_specs(folder: Path, name: str) -> Path:
    data = json.loads((FIXTURES / f"{name}.tools.json").read_text())
    specs = {}
    for tool in data["tools"]:
        spec: dict[str, Any] = {
            "description": tool.get("description") or tool["name"],
            "input_schema": tool["inputSchema"],
        }
        if "outputSchema" in tool:
            spec["output_schema"] = tool["outputSchema"]
        specs[f"{tool['name']}.json"] = spec
    return write_specs(folder, specs)


SAMPLES = sorted(p.name.removesuffix(".tools.json") for p in FIXTURES.glob("*.tools.json"))


@pytest.mark.parametrize("name", SAMPLES)
def test_real_mcp_schemas_no_false_alarms(name: str, tmp_path: Path) -> None:
    """Every target but Gemini parameters takes these schemas as served; Gemini with
    parametersJsonSchema does too; and whatever builds is accepted by every provider's SDK."""
    mcp_sample_specs(tmp_path / "specs", name)
    others = ("openai", "openai_responses", "anthropic", "mcp", "bedrock")
    args = [arg for target in others for arg in ("--target", target)]
    result = cli("build", "specs", "--out", "out", *args, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "error" not in result.stderr
    assert_accepted(schemas_of(tmp_path / "out"))

    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n'
    )
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert_accepted(schemas_of(tmp_path / "out"))


@pytest.mark.parametrize("name", SAMPLES)
def test_real_mcp_schemas_on_gemini_parameters(name: str, tmp_path: Path) -> None:
    """With transforms on, Gemini parameters either builds (and the SDK accepts the file) or
    stops only on features that have no meaning-preserving rewrite."""
    mcp_sample_specs(tmp_path / "specs", name)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen.gemini]\ntransforms = ["strip_meta", "const_to_enum", "nullable"]\n'
    )
    result = cli("build", "specs", "--out", "out", "--target", "gemini", cwd=tmp_path)
    if result.exit_code == 0:
        assert_accepted(schemas_of(tmp_path / "out"))
    else:
        codes = {
            line.split("[")[1].split("]")[0]
            for line in result.stderr.splitlines()
            if "error[" in line
        }
        assert codes <= {"TN313", "TN316", "TN312", "TN314"}, result.stderr
