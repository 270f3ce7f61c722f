"""A third party's schema is data: the keywords datamodel-code-generator reads as instructions
(`customTypePath`, `customBasePath`, `x-python-*`, ...) never choose what the generated package
imports. `import openapi` and `sync` strip them with a note; `build` refuses them in any spec
(TN122) unless the project opts in for its own specs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conftest import cli, snapshot, write_specs

from toolnexus_gen.diagnostics.examples import RAW_SERVER
from toolnexus_gen.toolspec.codegen_keywords import found, strip

STEERING = {
    "a": {"type": "string", "customTypePath": "os.system"},
    "b": {
        "type": "object",
        "customBasePath": "subprocess.Popen",
        "properties": {"c": {"type": "integer"}},
    },
    "d": {"type": "string", "x-python-type": "shutil.rmtree"},
    "e": {"type": "object", "x-python-import": {"module": "os", "name": "system"}},
}


def _spec(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": "Steers",
        "input_schema": {"type": "object", "properties": properties},
    }


def _pyproject(folder: Path, extra: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n{extra}'
    )


def test_found_reads_keywords_not_names_nor_data() -> None:
    schema = {
        "type": "object",
        "properties": {
            "customTypePath": {"type": "string"},  # a property's name: no keyword
            "x": {"enum": [{"customTypePath": "os.system"}], "default": {"x-python-type": "y"}},
            "y": {"items": [{"customFooPath": "m.n"}]},  # a draft-4 tuple: still a schema
            "z": {"dependencies": {"customTypePath": {"x-python-import": {"module": "os"}}}},
        },
        "$defs": {"D": {"x-is-classvar": True}},
        "x-vendor": {"anyOf": [{"customBasePath": "m.B"}]},  # an extension's value: data
        "dependentRequired": {"customTypePath": ["x"]},  # property names
        "not": {"x-python-type": "os.system"},
    }
    assert found(schema) == [
        "/properties/y/items/0/customFooPath",
        "/properties/z/dependencies/customTypePath/x-python-import",
        "/$defs/D/x-is-classvar",
        "/not/x-python-type",
    ]
    stripped, removed = strip(schema)
    assert found(stripped) == [] and len(removed) == 4
    assert stripped["properties"]["customTypePath"] == {"type": "string"}
    assert stripped["properties"]["x"] == schema["properties"]["x"]  # data kept as written
    assert strip({"type": "string"})[0] == {"type": "string"}


def test_build_refuses_them_where_they_are_written_fragments_too(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    _pyproject(folder)
    write_specs(
        folder / "specs",
        {
            "steer.json": _spec(STEERING),
            "via_ref.yaml": _spec({"q": {"$ref": "_shared/q.yaml"}}),
            "_shared/q.yaml": "type: string\nx-python-type: os.system\n",
        },
    )
    before = snapshot(folder)
    result = cli("build", cwd=folder)
    assert result.exit_code == 2, result.output + result.stderr
    lines = [line for line in result.stderr.splitlines() if "[TN122]" in line]
    keywords = ["customTypePath", "customBasePath", "x-python-type", "x-python-import"]
    for keyword in keywords:
        assert any(
            line.startswith("specs/steer.json:") and f"'{keyword}'" in line for line in lines
        )
    assert any(line.startswith("specs/_shared/q.yaml:2:1: error[TN122]") for line in lines)
    assert snapshot(folder) == before  # nothing written


def test_the_project_may_opt_in_for_its_own_specs_not_for_snapshots(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    _pyproject(folder, 'codegen_keywords = true\ntargets = ["openai"]\n')
    own = _spec({"n": {"type": "string", "customTypePath": "decimal.Decimal"}})
    write_specs(folder / "specs", {"own.json": own})
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    assert "from decimal import Decimal" in (folder / "tools/models/own.py").read_text()

    snapshot_spec = {**own, "source": {"mcp": {"server": "s", "tool": "own"}}}
    write_specs(folder / "specs", {"s/s_own.json": snapshot_spec})
    result = cli("build", cwd=folder)
    assert result.exit_code == 2
    assert "specs/s/s_own.json:" in result.stderr and "[TN122]" in result.stderr
    assert "sync strips them" in result.stderr


DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "Steer", "version": "1"},
    "servers": [{"url": "https://steer.example"}],
    "paths": {
        "/things": {
            "post": {
                "operationId": "make_thing",
                "requestBody": {
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
    "components": {
        "schemas": {
            "Thing": {
                "type": "object",
                "customBasePath": "subprocess.Popen",
                "properties": {
                    "name": {"type": "string", "customTypePath": "os.system"},
                    "kind": {"type": "string", "x-python-type": "shutil.rmtree"},
                    "pair": {
                        "type": "object",
                        "dependencies": {"name": {"customTypePath": "os.getcwd"}},
                    },
                },
            }
        }
    },
}


def test_import_openapi_strips_them_with_a_note_and_builds(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    _pyproject(folder, 'targets = ["openai"]\n')
    (folder / "specs").mkdir()
    (folder / "steer.json").write_text(json.dumps(DOCUMENT))
    result = cli("import", "openapi", "steer.json", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    text = result.output + result.stderr
    for keyword, where in (
        ("customBasePath", "/components/schemas/Thing/customBasePath"),
        ("customTypePath", "/components/schemas/Thing/properties/name/customTypePath"),
        ("x-python-type", "/components/schemas/Thing/properties/kind/x-python-type"),
        (
            "customTypePath",
            "/components/schemas/Thing/properties/pair/dependencies/name/customTypePath",
        ),
    ):
        assert f"steer.json#{where}: '{keyword}' left out" in text
    written = "".join(p.read_text() for p in (folder / "specs").rglob("*.*"))
    assert "customTypePath" not in written and "x-python" not in written
    assert "customBasePath" not in written
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    models = "".join(p.read_text() for p in (folder / "tools/models").glob("*.py"))
    assert "import system" not in models and "rmtree" not in models and "Popen" not in models


def test_sync_strips_them_with_a_note_and_the_snapshot_builds(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    _pyproject(folder, 'mcp_config = "mcp.json"\ntargets = ["openai"]\n')
    tools = [
        {
            "name": "steer",
            "description": "Steers",
            "inputSchema": {"type": "object", "properties": STEERING},
            "outputSchema": {"type": "object", "x-python-type": "os.system"},
        }
    ]
    (folder / "server.py").write_text(RAW_SERVER.format(tools=json.dumps(tools)))
    server = {"command": sys.executable, "args": ["server.py"]}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {"raw": server}}))
    (folder / "specs").mkdir()
    result = cli("sync", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    notes = [line for line in result.stderr.splitlines() if "warning[TN123]" in line]
    assert len(notes) == 5, result.stderr
    assert any("'x-python-type' removed from output_schema at /x-python-type" in n for n in notes)
    assert any(
        "'customTypePath' removed from input_schema at /properties/a/customTypePath" in n
        for n in notes
    )
    written = (folder / "specs/raw/raw_steer.json").read_text()
    assert "customTypePath" not in written and "x-python" not in written
    assert json.loads(written)["input_schema"]["properties"]["b"]["properties"] == {
        "c": {"type": "integer"}
    }
    result = cli("build", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr


def test_import_of_a_provider_file_strips_them_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    _pyproject(folder, 'targets = ["openai"]\n')
    (folder / "specs").mkdir()
    tools = {
        "tools": [
            {
                "name": "steer",
                "description": "Steers",
                "inputSchema": _spec(STEERING)["input_schema"],
            }
        ]
    }
    (folder / "tools.json").write_text(json.dumps(tools))
    result = cli("import", "mcp", "tools.json", cwd=folder)
    assert result.exit_code == 0, result.output + result.stderr
    text = result.output + result.stderr
    assert "'customTypePath' removed from input_schema at /properties/a/customTypePath" in text
    assert "'x-python-import' removed from input_schema at /properties/e/x-python-import" in text
    written = "".join(p.read_text() for p in (folder / "specs").rglob("*.*"))
    assert "customTypePath" not in written and "x-python" not in written
    assert cli("build", cwd=folder).exit_code == 0
