"""Property: instances valid under a tool's JSON Schema are accepted by its generated model, and
what the model dumps is valid under the schema again (hypothesis + hypothesis-jsonschema)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
from conftest import WEATHER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from pydantic import ValidationError
from test_generated_quality import HOSTILE
from test_runtime import SPECS
from test_targets_sdk import RICH

ALL_SPECS = {
    **WEATHER,
    **SPECS,
    **RICH,
    **HOSTILE,
    "shapes.yaml": {
        "description": "Unions, nullables, nested arrays and objects",
        "input_schema": {
            "type": "object",
            "properties": {
                "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "either": {"type": ["string", "number"]},
                "matrix": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "integer"}},
                    "maxItems": 3,
                },
                "point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x", "y"],
                    "additionalProperties": False,
                },
                "choice": {"type": "integer", "enum": [1, 2, 3]},
                "word": {"type": "string", "minLength": 2, "maxLength": 5},
            },
            "required": ["point"],
        },
    },
}
# Copies: hypothesis-jsonschema resolves refs in the schemas it is given, and other modules'
# specs must not change under them.
SCHEMAS = {
    name.rsplit(".", 1)[0]: copy.deepcopy(spec["input_schema"])
    for name, spec in ALL_SPECS.items()
    if "input_schema" in spec
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    import importlib
    import sys

    from conftest import cli, write_specs

    root = tmp_path_factory.mktemp("props")
    specs = write_specs(
        root / "specs",
        {
            f"{name}.yaml": {"description": "d", "input_schema": schema}
            for name, schema in SCHEMAS.items()
        },
    )
    # Models are the point here; mcp is the target that takes any 2020-12 schema.
    result = cli("build", str(specs), "--out", str(root / "props_pkg"), "--target", "mcp")
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(root))
    try:
        pkg = importlib.import_module("props_pkg")
    finally:
        sys.path.remove(str(root))
    return {name: spec.model for name, spec in pkg.TOOLS.items()}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_model_agrees_with_schema(name: str, models: dict[str, Any]) -> None:
    schema = SCHEMAS[name]
    model = models[name]
    validator = jsonschema.Draft202012Validator(schema)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(from_schema(schema, allow_x00=True) | st.just({}))
    def check(instance: Any) -> None:
        if not validator.is_valid(instance):
            return
        parsed = model.model_validate(instance)
        dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        assert validator.is_valid(dumped), (instance, dumped)

    check()


# -- the reverse: what the schema rejects, the model rejects -----------------------------------

WRONG_VALUES = st.sampled_from([None, "5", 5, 5.5, True, [], {}, "", "x" * 50, -1, 10**9])


def nulls_an_optional_property_without_default(schema: dict[str, Any], instance: Any) -> bool:
    """The one disagreement left on purpose: a model field for an optional property without a
    default is `X | None = None` (None is how a model says "absent"), so it takes an explicit
    null that the schema would refuse."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return isinstance(instance, dict) and any(
        value is None
        and name in properties
        and name not in required
        and "default" not in properties[name]
        for name, value in instance.items()
    )


def bool_for_a_number_enum(schema: dict[str, Any], instance: Any) -> bool:
    """The other gap: Python's True == 1, so an Enum of 1, 2, 3 takes true (JSON Schema compares
    JSON values, where true is not 1)."""
    properties = schema.get("properties") or {}
    return isinstance(instance, dict) and any(
        isinstance(value, bool)
        and isinstance(properties.get(name), dict)
        and any(isinstance(v, (int, float)) for v in properties[name].get("enum", []))
        for name, value in instance.items()
    )


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_model_rejects_what_the_schema_rejects(name: str, models: dict[str, Any]) -> None:
    schema = SCHEMAS[name]
    model = models[name]
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.tuples(from_schema(schema, allow_x00=True), st.data()))
    def check(pair: tuple[Any, st.DataObject]) -> None:
        valid, data = pair
        if not isinstance(valid, dict):
            return
        instance = dict(valid)
        properties = sorted((schema.get("properties") or {}).keys())
        how = data.draw(st.sampled_from(["replace", "remove", "add"]))
        key = data.draw(st.sampled_from([*properties, "not_a_property"]))
        if how == "replace":
            instance[key] = data.draw(WRONG_VALUES)
        elif how == "remove":
            instance.pop(key, None)
        else:
            instance[f"unexpected_{key}"] = data.draw(WRONG_VALUES)
        if (
            validator.is_valid(instance)
            or nulls_an_optional_property_without_default(schema, instance)
            or bool_for_a_number_enum(schema, instance)
        ):
            return
        with pytest.raises(ValidationError):
            model.model_validate(instance)

    check()


@pytest.fixture(scope="module")
def no_arguments(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from conftest import build_in

    pkg = build_in(tmp_path_factory.mktemp("noargs"), {"now.yaml": {"description": "Now"}})
    return pkg.NowArgs


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1), WRONG_VALUES, min_size=1))
def test_a_tool_without_arguments_takes_none(no_arguments: Any, instance: dict[str, Any]) -> None:
    # every provider file says {"type": "object", "properties": {}, "additionalProperties": false}
    assert no_arguments.model_validate({}).model_dump() == {}
    with pytest.raises(ValidationError):
        no_arguments.model_validate(instance)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_descriptions_reach_the_models_json_schema(name: str, models: dict[str, Any]) -> None:
    properties = SCHEMAS[name].get("properties") or {}
    model = models[name]
    by_alias = {field.alias or key: field for key, field in model.model_fields.items()}
    generated = model.model_json_schema(by_alias=True).get("properties", {})
    for prop, sub in properties.items():
        if isinstance(sub, dict) and isinstance(sub.get("description"), str) and "$ref" not in sub:
            assert by_alias[prop].description == sub["description"], prop
            assert generated[prop]["description"] == sub["description"], prop
