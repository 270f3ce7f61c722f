"""Work that grows with the document, not with the paths through its `$ref` graph: a document
whose shared schemas form a DAG (each level names the next twice, no cycle) imports and builds
for every target at depth 30 (2**30 paths), its argument maps hold each definition once, and a
target that must inline refuses it at a budget (TN230) instead of copying it out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, write_specs
from provider_rules import violations
from sdk_check import assert_accepted
from toolnexus_runtime.aliases import _absent_nulls, _unalias

from toolnexus_gen.ir import Located
from toolnexus_gen.targets.argmaps import argument_map
from toolnexus_gen.toolspec.bundle import Cycle, TooLarge, first_cycle, inline, inlined_size

DEPTH = 30


def dag_document(depth: int, operations: int = 1) -> dict[str, Any]:
    """An OpenAPI document whose schema L<i> has two properties that both name L<i+1>."""
    schemas: dict[str, Any] = {
        f"L{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/components/schemas/L{i + 1}"},
                "b": {"$ref": f"#/components/schemas/L{i + 1}"},
            },
        }
        for i in range(depth - 1)
    }
    schemas[f"L{depth - 1}"] = {"type": "object", "properties": {"v": {"type": "string"}}}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/L0"}}}}
    paths = {
        f"/things{k}": {
            "post": {
                "operationId": f"make{k}",
                "requestBody": body,
                "responses": {"200": {"description": "ok", **body}},
            }
        }
        for k in range(operations)
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Dag", "version": "1"},
        "servers": [{"url": "https://dag.example"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def union_document(depth: int) -> dict[str, Any]:
    """A document whose schema L<i> is an anyOf of two refs to L<i+1> (a string at the end),
    used as a query parameter, a body property and a response property."""
    schemas: dict[str, Any] = {
        f"L{i}": {
            "anyOf": [
                {"$ref": f"#/components/schemas/L{i + 1}"},
                {"$ref": f"#/components/schemas/L{i + 1}", "description": "again"},
            ]
        }
        for i in range(depth - 1)
    }
    schemas[f"L{depth - 1}"] = {"type": "string"}
    holder = {"type": "object", "properties": {"r": {"$ref": "#/components/schemas/L0"}}}
    content = {"content": {"application/json": {"schema": holder}}}
    query = {"name": "q", "in": "query", "schema": {"$ref": "#/components/schemas/L0"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Unions", "version": "1"},
        "servers": [{"url": "https://unions.example"}],
        "paths": {
            "/look": {
                "get": {
                    "operationId": "look",
                    "parameters": [query],
                    "responses": {"200": {"description": "ok", **content}},
                }
            },
            "/put": {
                "post": {
                    "operationId": "put",
                    "requestBody": content,
                    "responses": {"204": {"description": "done"}},
                }
            },
        },
        "components": {"schemas": schemas},
    }


def dag_schema(depth: int) -> dict[str, Any]:
    """The same graph as one input schema with $defs."""
    defs: dict[str, Any] = {
        f"L{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/L{i + 1}"}, "b": {"$ref": f"#/$defs/L{i + 1}"}},
        }
        for i in range(depth - 1)
    }
    defs[f"L{depth - 1}"] = {"type": "object", "properties": {"v": {"type": "string"}}}
    return {"type": "object", "properties": {"top": {"$ref": "#/$defs/L0"}}, "$defs": defs}


def test_a_dag_of_shared_schemas_imports_and_builds_for_every_target(tmp_path: Path) -> None:
    document = tmp_path / "dag.json"
    document.write_text(json.dumps(dag_document(DEPTH)))
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
    imported = cli("import", "openapi", str(document), "--specs", "specs", cwd=tmp_path)
    assert imported.exit_code == 0, imported.stderr
    shared = sorted((tmp_path / "specs" / "_dag").glob("*.json"))
    assert len(shared) == DEPTH  # each schema written once, whatever reaches it
    specs_size = sum(p.stat().st_size for p in (tmp_path / "specs").rglob("*.*"))
    assert specs_size < 20_000

    built = cli("build", "specs", "--out", "dag_tools", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    schemas = tmp_path / "dag_tools" / "schemas"
    sizes = {p.name: p.stat().st_size for p in schemas.glob("*.json")}
    # each file holds every definition once: it grows with the depth, never with 2**depth
    assert sizes and max(sizes.values()) < 60_000, sizes

    # Gemini `parameters` would be 2**30 copies: refused at the budget (TN230), and under
    # profile "reach" the declaration goes out with parametersJsonSchema, $defs kept
    assert "1 Gemini declaration via parametersJsonSchema" in built.stderr
    (declaration,) = json.loads((schemas / "gemini.json").read_text())[0]["functionDeclarations"]
    assert "parameters" not in declaration
    assert len(declaration["parametersJsonSchema"]["$defs"]) == DEPTH - 1
    targets = ("openai", "anthropic", "mcp", "gemini", "bedrock", "openai_responses")
    files = {t: json.loads((schemas / f"{t}.json").read_text()) for t in targets}
    assert_accepted(files)
    assert violations(files) == []  # $defs and $ref as each provider's rules take them

    # strictify's null map: each definition once, named by the entries that reach it
    aliases = json.loads((schemas / "aliases.json").read_text())
    nulls = aliases["nulls"]["openai"]["make0"]
    refs = aliases["null_refs"]["openai"]["make0"]
    assert set(refs) == {f"/$defs/L{i}" for i in range(1, DEPTH)}
    assert nulls["a"] == [True, {}, ["/$defs/L1"]]
    deep: Any = {"v": None}
    for _ in range(DEPTH - 1):
        deep = {"a": deep, "b": None}
    assert _absent_nulls(deep, nulls, refs) == _expected_absent(deep)


def _expected_absent(value: Any) -> Any:
    """Every null dropped (each property of the DAG is optional)."""
    if isinstance(value, dict):
        return {k: _expected_absent(v) for k, v in value.items() if v is not None}
    return value


def test_argument_maps_hold_each_definition_once() -> None:
    schema = dag_schema(40)
    nulls, refs = argument_map(schema, lambda node, name, child: (name, True), lambda n: False)
    assert len(json.dumps([nulls, refs])) < 5_000
    assert set(refs) == {f"/$defs/L{i}" for i in range(1, 40)}  # L0: one ref, expanded


def test_shared_maps_mean_what_expanded_maps_mean() -> None:
    """At a depth where expanding is cheap, the map with shared definitions translates a call
    exactly as the map of the fully inlined schema does."""
    schema = dag_schema(5)
    schema["$defs"]["L2"]["properties"]["a-b"] = {"type": "string"}  # an alias inside

    def entry(node: dict[str, Any], name: str, child: Any) -> tuple[str, Any] | None:
        return (name.replace("-", "_"), name) if "-" in name else None

    shared = argument_map(schema, entry, lambda name: name)
    inlined = inline(Located(schema, ())).schema
    expanded = argument_map(inlined, entry, lambda name: name)
    assert expanded[1] == {} and shared[1]
    level2 = {"a_b": "x", "a": {"a": {"v": "z"}}}  # L2 holds the aliased property
    call = {"top": {"a": {"a": level2, "b": level2}, "b": {"b": level2}}}
    assert _unalias(call, *shared) == _unalias(call, expanded[0]) != call


def test_inlining_is_refused_past_the_budget_before_any_copy() -> None:
    schema = dag_schema(DEPTH)
    size, pointer = inlined_size(schema)
    assert size > 2**DEPTH and pointer == "/properties/top/$ref"
    with pytest.raises(TooLarge) as refused:
        inline(Located(schema, ()))
    assert refused.value.size == size


def test_a_cycle_is_found_as_inlining_finds_it() -> None:
    schema = dag_schema(DEPTH)
    schema["$defs"][f"L{DEPTH - 1}"]["properties"]["back"] = {"$ref": "#/$defs/L3"}
    cycle = first_cycle(Located(schema, ()))
    assert cycle is not None and cycle.path[0] == "#/$defs/L3" == cycle.path[-1]
    small = dag_schema(4)
    small["$defs"]["L3"]["properties"]["back"] = {"$ref": "#/$defs/L1"}
    with pytest.raises(Cycle) as inlined:
        inline(Located(small, ()))
    loop = ["#/$defs/L1", "#/$defs/L2", "#/$defs/L3", "#/$defs/L1"]
    assert (inlined.value.path, inlined.value.pointer) == (
        loop,
        "/$defs/L3/properties/back/$ref",
    )
    assert first_cycle(Located(dag_schema(DEPTH), ())) is None


def test_a_spec_with_a_shared_dag_builds_for_gemini_parameters_as_an_error(
    tmp_path: Path,
) -> None:
    """Without profile "reach", the Gemini `parameters` form is refused where it stands."""
    specs = write_specs(
        tmp_path / "specs",
        {"order.json": {"description": "An order", "input_schema": dag_schema(DEPTH)}},
    )
    (tmp_path / "pyproject.toml").write_text('[tool.toolnexus-gen]\ntargets = ["gemini"]\n')
    result = cli("build", str(specs), "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[TN230]" in result.stderr and "/properties/top/$ref" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_dag_of_unions_imports_and_builds(tmp_path: Path) -> None:
    """A parameter's kinds, an object made of allOf branches and strictify's "takes null" are
    judged once per definition (each was a walk over every path)."""
    document = tmp_path / "unions.json"
    document.write_text(json.dumps(union_document(40)))
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
    imported = cli("import", "openapi", str(document), "--specs", "specs", cwd=tmp_path)
    assert imported.exit_code == 0, imported.stderr
    look = (tmp_path / "specs" / "look.yaml").read_text()
    assert "q:" in look  # the query parameter, a string however deep its unions go
    built = cli("build", "specs", "--out", "union_tools", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    openai = json.loads((tmp_path / "union_tools" / "schemas" / "openai.json").read_text())
    (put,) = [e["function"] for e in openai if e["function"]["name"] == "put"]
    assert put["strict"] is True
    assert put["parameters"]["properties"]["r"] == {
        "anyOf": [{"$ref": "#/$defs/L0"}, {"type": "null"}]
    }
    sizes = [p.stat().st_size for p in (tmp_path / "union_tools" / "schemas").glob("*.json")]
    assert max(sizes) < 100_000


def test_shared_definitions_bundle_alike_whichever_tool_comes_first(tmp_path: Path) -> None:
    """A build bundles a shared definition once and hands it to every tool that names it alike;
    a tool whose own $defs take a name, or whose refs start elsewhere in the same files, gets
    what a build of it alone makes."""
    shared = {
        "_common/node.json": {
            "type": "object",
            "properties": {
                "child": {"$ref": "#"},
                "tag": {"$ref": "tag.json"},
                "owner": {"$ref": "person.json#/$defs/person"},
            },
        },
        "_common/tag.json": {"type": "string", "maxLength": 10},
        "_common/person.json": {
            "$defs": {
                "person": {"type": "object", "properties": {"best": {"$ref": "#/$defs/person"}}}
            }
        },
    }
    tools: dict[str, Any] = {
        "a_plain.json": {"properties": {"n": {"$ref": "_common/node.json"}}},
        "b_taken.json": {
            "properties": {"n": {"$ref": "_common/node.json"}, "t": {"$ref": "#/$defs/tag"}},
            "$defs": {"tag": {"type": "integer"}},
        },
        "c_person_first.json": {
            "properties": {
                "p": {"$ref": "_common/person.json#/$defs/person"},
                "n": {"$ref": "_common/node.json"},
            }
        },
        "d_tag_only.json": {"properties": {"t": {"$ref": "_common/tag.json"}}},
    }
    for name, schema in tools.items():
        tools[name] = {"description": name, "input_schema": {"type": "object", **schema}}
    config = '[tool.toolnexus-gen]\ntargets = ["openai", "mcp"]\n'

    def built(folder: Path, names: list[str]) -> dict[str, Any]:
        write_specs(folder / "specs", {**shared, **{n: tools[n] for n in names}})
        (folder / "pyproject.toml").write_text(config)
        result = cli("build", "specs", "--out", "out", cwd=folder)
        assert result.exit_code == 0, result.stderr
        entries = json.loads((folder / "out" / "schemas" / "openai.json").read_text())
        return {e["function"]["name"]: e["function"]["parameters"] for e in entries}

    together = built(tmp_path / "all", sorted(tools))
    for name in sorted(tools):
        alone = built(tmp_path / name.split(".")[0], [name])
        tool = name.split(".")[0]
        assert json.dumps(together[tool]) == json.dumps(alone[tool])  # key order too
    assert set(together["b_taken"]["$defs"]) == {"tag", "node", "tag_2", "person"}


def test_branches_of_shared_definitions_merge_key_by_key() -> None:
    """A value that is either of two shared definitions holding the same property: the run-time
    map of that property is both definitions' maps merged, as the expanded map says."""

    def holder(inner: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "p": {"type": "object", "properties": {inner: {"type": "string"}}},
            },
        }

    schema = {
        "type": "object",
        "properties": {
            "one": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
            "two": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        },
        "$defs": {"A": holder("x"), "B": holder("y")},
    }

    def nullable(node: dict[str, Any], name: str, child: Any) -> tuple[str, Any]:
        return name, True

    shared = argument_map(schema, nullable, lambda name: False)
    expanded = argument_map(inline(Located(schema, ())).schema, nullable, lambda name: False)
    assert shared[1] and not expanded[1]
    call = {"one": {"p": {"x": None, "y": None}}, "two": {"p": {"x": "a", "y": None}}}
    assert _absent_nulls(call, *shared) == _absent_nulls(call, expanded[0])
    assert _absent_nulls(call, *shared) == {"one": {"p": {}}, "two": {"p": {"x": "a"}}}
