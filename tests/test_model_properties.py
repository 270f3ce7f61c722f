"""Property: instances valid under a tool's JSON Schema are accepted by its generated model, and
what the model dumps is valid under the schema again (hypothesis + hypothesis-jsonschema)."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from conftest import WEATHER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
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
SCHEMAS = {
    name.rsplit(".", 1)[0]: spec["input_schema"]
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
