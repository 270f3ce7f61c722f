"""An import's schemas stay within a budget, and its output grows with the document, not with
the operations times the shared schemas they reach: an operation whose arguments reach too much
schema is skipped (TN472), a result schema too large is left out of its spec (TN473), each named,
and shared schemas only such results reach are not written. Sizes are counted in bytes, each
shared schema once, however many paths lead to it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import cli
from test_shared_schemas import dag_document

from toolnexus_gen.sources.openapi import read
from toolnexus_gen.sources.openapi.schemas import BUDGET, INPUT, OUTPUT


def hierarchy(count: int, padding: int) -> dict[str, Any]:
    """Component schemas E0..E<count-1>, each an `entity` (allOf) with a description of
    `padding` characters and a property naming the next one: E0 reaches them all, as Microsoft
    Graph's entities reach its whole hierarchy."""
    schemas: dict[str, Any] = {
        "entity": {"type": "object", "properties": {"id": {"type": "string"}}},
        "small": {"type": "object", "properties": {"name": {"type": "string"}}},
        "smalls": {
            "type": "object",
            "properties": {"value": {"items": {"$ref": "#/components/schemas/small"}}},
        },
    }
    for i in range(count):
        own: dict[str, Any] = {"description": f"E{i} " + "x" * padding, "type": "string"}
        properties: dict[str, Any] = {f"field{i}": own}
        if i + 1 < count:
            properties["next"] = {"$ref": f"#/components/schemas/E{i + 1}"}
        schemas[f"E{i}"] = {
            "allOf": [{"$ref": "#/components/schemas/entity"}, {"properties": properties}]
        }
    return schemas


def document(schemas: dict[str, Any], paths: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Things", "version": "1"},
        "servers": [{"url": "https://things.example"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _json(name: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{name}"}
    return {"content": {"application/json": {"schema": ref}}}


def test_operations_over_the_budget_are_named_and_the_rest_imported(tmp_path: Path) -> None:
    paths = {
        "/things": {
            "post": {
                "operationId": "createThing",
                "requestBody": {"required": True, **_json("E0")},
                "responses": {"204": {"description": "done"}},
            },
            "get": {
                "operationId": "getThing",
                "responses": {"200": {"description": "ok", **_json("E0")}},
            },
        },
        "/small": {
            "get": {
                "operationId": "getSmall",
                "responses": {"200": {"description": "ok", **_json("smalls")}},
            }
        },
    }
    source = tmp_path / "things.json"
    source.write_text(json.dumps(document(hierarchy(80, 1000), paths)))
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")

    done = cli("import", "openapi", str(source), "--specs", "specs", cwd=tmp_path)

    assert done.exit_code == 0, done.stderr
    specs = tmp_path / "specs"
    assert sorted(p.stem for p in specs.glob("*.yaml")) == ["getSmall", "getThing"]
    (skipped,) = [line for line in done.stderr.splitlines() if "warning[TN472]" in line]
    assert skipped.startswith("things.json:1:")  # located in the document
    assert "(operation skipped: createThing (POST /things))" in skipped
    assert f"the budget is {BUDGET[INPUT]:,}" in skipped
    (untyped,) = [line for line in done.stderr.splitlines() if "warning[TN473]" in line]
    assert "(operation without a result schema: getThing (GET /things))" in untyped
    assert f"the budget is {BUDGET[OUTPUT]:,}" in untyped
    assert "output_schema" not in yaml.safe_load((specs / "getThing.yaml").read_text())
    assert "output_schema" in yaml.safe_load((specs / "getSmall.yaml").read_text())
    # the hierarchy only the left-out result reaches is not written (E0's and smalls' own
    # files are, as for any component an operation's root names)
    written = sorted(p.name for p in (specs / "_things").glob("*.json"))
    assert written == ["E0.json", "small.json", "smalls.json"]


def test_a_schema_reached_by_many_paths_is_counted_once(tmp_path: Path) -> None:
    """A DAG of depth 30 has 2**30 paths and 30 schemas: well within the budget."""
    source = tmp_path / "dag.json"
    source.write_text(json.dumps(dag_document(30)))

    imported = read(source)

    spec = imported.specs["make0"]
    assert "input_schema" in spec and "output_schema" in spec
    assert not imported.warnings and not imported.skipped


def _sizes(tmp_path: Path, operations: int) -> tuple[int, int, int, int]:
    """(bytes of spec files, of shared files, of the provider files, of the models) for a
    document whose operations all reach one hierarchy of 12 schemas."""
    paths = {
        f"/things{k}": {
            "get": {
                "operationId": f"getThing{k}",
                "responses": {"200": {"description": "ok", **_json("E0")}},
            },
            "post": {
                "operationId": f"putThing{k}",
                "requestBody": {"required": True, **_json("E0")},
                "responses": {"204": {"description": "done"}},
            },
        }
        for k in range(operations)
    }
    project = tmp_path / f"n{operations}"
    project.mkdir()
    source = project / "things.json"
    source.write_text(json.dumps(document(hierarchy(12, 200), paths)))
    (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
    assert cli("import", "openapi", str(source), "--specs", "specs", cwd=project).exit_code == 0
    built = cli("build", "specs", "--out", "things_tools", cwd=project)
    assert built.exit_code == 0, built.stderr
    specs = project / "specs"
    out = project / "things_tools"

    def total(files: Any) -> int:
        return sum(p.stat().st_size for p in files)

    return (
        total(specs.glob("*.yaml")),
        total((specs / "_things").glob("*.json")),
        total((out / "schemas").glob("*.json")),
        total((out / "models").glob("*.py")),
    )


def test_what_an_import_and_a_build_write_grows_linearly_with_the_operations(
    tmp_path: Path,
) -> None:
    specs_n, shared_n, schemas_n, models_n = _sizes(tmp_path, 3)
    specs_2n, shared_2n, schemas_2n, models_2n = _sizes(tmp_path, 6)

    # the hierarchy is written once, whatever number of operations reach it
    assert shared_2n == shared_n > 12 * 200
    # a spec names the hierarchy, never carries it: twice the operations, twice the bytes
    # (give or take the digits of their names)
    assert 1.9 * specs_n < specs_2n < 2.1 * specs_n
    assert specs_n < shared_n
    # each provider entry and each model carries what its tool reaches: linear, never more
    assert schemas_2n < 2.1 * schemas_n
    assert models_2n < 2.1 * models_n


def test_positions_found_in_any_order_are_those_a_fresh_walk_finds() -> None:
    """The warnings of many operations share one walk of the document's text (what a walk
    finds is kept): in whatever order they are asked for, the places are the same."""
    data = {
        "paths": {f"/p{i}": {"get": {"responses": {"200": [i, {"d": i}]}}} for i in range(30)},
        "twice": {"k": 1},
        "last": [],
    }
    text = json.dumps(data, indent=1)
    pointers = [f"/paths/~1p{i}/get/responses/200/1/d" for i in range(30)]
    pointers += ["/paths/~1p7", "/twice/k", "/last", "/paths/~1nothing/get", "/nothing", ""]
    alone = {p: (_positions(text).value(p), _positions(text).key(p)) for p in pointers}
    shared = _positions(text)
    for pointer in [*reversed(pointers), *pointers[::3], *pointers]:
        assert (shared.value(pointer), shared.key(pointer)) == alone[pointer], pointer
    lines = text.splitlines()
    row = next(n for n, line in enumerate(lines, 1) if line.strip() == '"/p7": {')
    column = lines[row - 1].index('"/p7"') + 1
    assert alone["/paths/~1p7"] == ((row, column + len('"/p7": ')), (row, column))
    # a pointer to nothing points at the nearest place above it
    assert alone["/paths/~1nothing/get"][0] == _positions(text).value("/paths")


def _positions(text: str) -> Any:
    from toolnexus_gen.sources.openapi.document import _LazyJsonPositions

    return _LazyJsonPositions(text)
