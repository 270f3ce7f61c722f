"""Property: under profile = "reach", any schema from a grammar of what breaks providers in real
tool sets ($defs reached through $ref at any depth, recursion, anyOf with free-form objects, maps,
arrays of any items, values of any type, pydantic's allOf around a $ref, a $ref beside keywords,
roots without a type) builds for all six targets, and every file passes the providers' SDK types
and their documented rules. Each example is a few tools in one build. The many examples run the
pipeline up to the files a provider sees (`analyse` + `render`: everything but the argument models,
which are made from the spec whatever the profile); a few run the whole build, models and all."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, write_specs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_rules import violations
from sdk_check import assert_accepted

from toolnexus_gen.config.options import header_for, resolve_options
from toolnexus_gen.config.pyproject import load_config
from toolnexus_gen.diagnostics import has_errors
from toolnexus_gen.pipeline.build import analyse
from toolnexus_gen.pipeline.render import render

REACH = '[tool.toolnexus-gen]\nprofile = "reach"\n'
EXAMPLES = int(os.environ.get("TNX_REACH_EXAMPLES", "15"))  # more for a longer search
DEFS = ("Filter", "Item", "Meta")  # each may refer to those after it, and to Node
NODE = {  # a tree: recursion through an optional property
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
    },
    "required": ["label"],
}
NAMES = st.sampled_from(["id", "query", "filter", "rows", "meta", "value", "opts", "año"])
FREE_FORM = st.sampled_from(
    [
        {"type": "object", "additionalProperties": True},
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
    ]
)
TYPELESS = st.sampled_from([{}, {"description": "any JSON value"}, {"title": "Value"}])


def leaves(refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
    plain = st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("string")},
            optional={
                "format": st.sampled_from(["uri", "email", "date-time"]),
                "enum": st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, unique=True),
                "maxLength": st.integers(1, 9),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.sampled_from(["integer", "number"])},
            optional={"minimum": st.integers(0, 3), "default": st.just(1)},
        ),
        st.just({"type": ["string", "null"]}),
        st.just({"type": ["string", "integer"]}),
        st.just({"const": "fixed"}),
        st.just({"type": "array"}),
        st.just({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}),
        st.just(
            {
                "type": "object",
                "anyOf": [
                    {"properties": {"url": {"type": "string"}}, "required": ["url"]},
                    {"properties": {"path": {"type": "string"}}, "required": ["path"]},
                ],
            }
        ),
        FREE_FORM,
        TYPELESS,
    )
    if not refs:
        return plain
    ref = st.sampled_from(refs).map(lambda name: f"#/$defs/{name}")
    return st.one_of(
        plain,
        ref.map(lambda r: {"$ref": r}),
        ref.map(lambda r: {"$ref": r, "description": "see the definition"}),
        ref.map(lambda r: {"allOf": [{"$ref": r}], "description": "pydantic v1"}),
        ref.map(lambda r: {"anyOf": [{"$ref": r}, {"type": "null"}], "default": None}),
    )


def objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.dictionaries(NAMES, children, min_size=1, max_size=3).flatmap(
        lambda properties: st.fixed_dictionaries(
            {
                "type": st.just("object"),
                "properties": st.just(properties),
                "required": st.lists(st.sampled_from(sorted(properties)), unique=True),
            },
            optional={"additionalProperties": st.sampled_from([False, True])},
        )
    )


def schemas(refs: tuple[str, ...]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves(refs),
        lambda children: st.one_of(
            objects(children),
            st.fixed_dictionaries({"type": st.just("array"), "items": children}),
            st.lists(children, min_size=1, max_size=3).map(lambda b: {"anyOf": b}),
            children.map(lambda c: {"anyOf": [FREE_FORM_EXAMPLE, c]}),
        ),
        max_leaves=5,
    )


FREE_FORM_EXAMPLE = {"type": "object", "additionalProperties": True}


@st.composite
def input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    defs: dict[str, Any] = {"Node": NODE}
    for i, name in enumerate(DEFS):
        defs[name] = draw(schemas((*DEFS[i + 1 :], "Node")))
    kind = draw(st.sampled_from(["object", "object", "empty", "untyped", "either", "based"]))
    if kind == "empty":  # takes any arguments
        return draw(st.sampled_from([{}, {"$schema": "http://json-schema.org/draft-07/schema#"}]))
    root = draw(objects(schemas((*DEFS, "Node"))))
    if kind == "untyped":
        root = {k: v for k, v in root.items() if k != "type"}
    if kind == "either":  # one property or another is required (a combinator at the root)
        root["anyOf"] = [{"required": [name]} for name in sorted(root["properties"])]
    if kind == "based":  # an OpenAPI-style base schema
        base = draw(st.sampled_from([*DEFS, "Node"]))
        root = {"allOf": [{"$ref": f"#/$defs/{base}"}, root], "type": "object"}
    return {**root, "$defs": defs}


def project(tools: list[dict[str, Any]], folder: Path) -> Path:
    (folder / "pyproject.toml").write_text(REACH)
    specs = {
        f"tool_{i}.json": {"description": f"Tool {i}", "input_schema": schema}
        for i, schema in enumerate(tools)
    }
    return write_specs(folder / "specs", specs)


def assert_reached(files: dict[str, Any], tools: list[dict[str, Any]]) -> None:
    assert {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"} <= set(files)
    assert len(files["gemini"][0]["functionDeclarations"]) == len(tools)  # no tool left behind
    assert_accepted(files)
    assert violations(files) == []


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(tools=st.lists(input_schemas(), min_size=1, max_size=3))
def test_every_provider_file_of_a_reach_build_is_accepted(
    tools: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("grammar")
    specs = project(tools, folder)
    options = resolve_options(load_config(folder), specs, folder / "out", None)
    analysis = analyse(options, paths=sorted(specs.glob("*.json")))
    errors = [d.format() for d in analysis.diagnostics if d.is_error]
    assert not has_errors(analysis.diagnostics), errors
    rendered = render(analysis.toolset, analysis.units, header_for(options))
    files = {
        path.removeprefix("schemas/").removesuffix(".json"): json.loads(text)
        for path, text in rendered.files.items()
        if path.startswith("schemas/")
    }
    assert_reached(files, tools)


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(tools=st.lists(input_schemas(), min_size=2, max_size=3))
def test_a_reach_build_of_the_grammar_succeeds_models_and_all(
    tools: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("grammar_build")
    project(tools, folder)
    result = cli("build", "specs", "--out", "out", cwd=folder)
    assert result.exit_code == 0, result.stderr
    assert " error[" not in result.stderr
    files = {p.stem: json.loads(p.read_text()) for p in Path(folder / "out/schemas").glob("*.json")}
    assert_reached(files, tools)
