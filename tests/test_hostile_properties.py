"""Property: whatever names, descriptions, property names, enum values and defaults a spec holds,
the generated package compiles, imports, gives every string back exactly, and its models accept
and refuse what the JSON Schema accepts and refuses."""

from __future__ import annotations

import importlib
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
from conftest import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from toolnexus_gen.toolspec.naming import python_names

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_.:-]{0,15}", fullmatch=True)
ENUMS = st.lists(TEXT, min_size=1, max_size=4, unique=True)
PROPERTY = st.tuples(TEXT, ENUMS, st.booleans(), st.booleans())  # name, values, default?, required?
TOOL = st.tuples(
    NAMES,
    TEXT.filter(lambda s: s.strip() != ""),
    st.lists(PROPERTY, min_size=1, max_size=3, unique_by=lambda p: p[0]),
)
TOOLS = st.lists(
    TOOL,
    min_size=1,
    max_size=3,
    unique_by=(
        lambda t: t[0],
        lambda t: python_names(t[0]).method,
        lambda t: python_names(t[0]).model,
        lambda t: python_names(t[0]).module,
    ),
)
EXAMPLES = int(os.environ.get("TNX_HOSTILE_EXAMPLES", "100"))
_counter = itertools.count()


def spec(description: str, properties: list[tuple[str, list[str], bool, bool]]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required = []
    for name, values, has_default, is_required in properties:
        props[name] = {"type": "string", "enum": values, "description": values[0]}
        if has_default:
            props[name]["default"] = values[-1]
        if is_required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return {"description": description, "input_schema": schema}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=TOOLS)
def test_any_strings_compile_import_and_round_trip(tools: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        specs = root / "specs"
        specs.mkdir()
        for name, description, properties in tools:
            (specs / f"{name}.json").write_text(json.dumps(spec(description, properties)), "utf-8")
        package = f"hostile_{next(_counter)}"
        # mcp takes any of these names (a warning at most); the Python side is what is tested.
        result = cli("build", "specs", "--out", package, "--target", "mcp", cwd=root)
        assert result.exit_code == 0, result.stderr
        sys.path.insert(0, str(root))
        try:
            pkg = importlib.import_module(package)
            check_package(pkg, tools)
        finally:
            sys.path.remove(str(root))
            for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
                del sys.modules[module]


def check_package(pkg: Any, tools: list[Any]) -> None:
    assert sorted(pkg.TOOLS) == sorted(name for name, _, _ in tools)
    definitions = {d["name"]: d for d in pkg.tool_definitions()}
    mcp = {t["name"]: t for t in pkg.to_mcp()}
    for name, description, properties in tools:
        assert definitions[name]["description"] == description
        assert mcp[name]["description"] == description
        schema = definitions[name]["input_schema"]
        model = pkg.TOOLS[name].model
        # A valid argument object: the model and JSON Schema both accept it, and it comes back.
        good = {prop: values[0] for prop, values, _, _ in properties}
        jsonschema.validate(good, schema)
        parsed = model.model_validate(good)
        dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        assert dumped == good
        # Defaults come back as the exact enum value.
        full = parsed.model_dump(mode="json", by_alias=True)
        for prop, values, has_default, _ in properties:
            if has_default and prop not in good:
                assert full[prop] == values[-1]
        # A value outside the enum: both refuse it.
        prop, values, _, _ = properties[0]
        bad = {**good, prop: "".join(values) + "\u2603x"}
        if bad[prop] not in values:
            try:
                jsonschema.validate(bad, schema)
                raise AssertionError("JSON Schema accepted a value outside the enum")
            except jsonschema.ValidationError:
                pass
            try:
                model.model_validate(bad)
                raise AssertionError("the model accepted a value outside the enum")
            except ValidationError:
                pass
        # Missing required properties: both refuse.
        required = [p for p, _, _, is_required in properties if is_required]
        if required:
            partial = {k: v for k, v in good.items() if k != required[0]}
            assert not jsonschema.Draft202012Validator(schema).is_valid(partial)
            try:
                model.model_validate(partial)
                raise AssertionError("the model accepted an object without a required property")
            except ValidationError:
                pass
