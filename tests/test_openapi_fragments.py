"""Fragments of the real OpenAPI documents (test_openapi_real.py, behind soak) that once broke
the generated package, each small enough for `make test`: one document holds them all, imported
and built with default settings; the package passes mypy --strict, ruff and ruff format, and
each shape is checked where it lands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from test_model_formats import quality

SETTINGS = '[project]\nname = "p"\nversion = "0"\n[tool.toolnexus-gen]\n'

# OpenAI's CreateChatCompletionRequest: a default its own type refuses (`max_tokens`), and
# defaults beside a oneOf whose array branch becomes a root model of its own (`stop`, `prompt`)
OPENAI_REQUEST = {
    "type": "object",
    "required": ["model"],
    "properties": {
        "model": {"type": "string"},
        "max_tokens": {"type": "integer", "default": "inf"},
        "stop": {
            "default": None,
            "oneOf": [
                {"type": "string", "nullable": True},
                {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4},
            ],
        },
        "prompt": {
            "default": "<|endoftext|>",
            "nullable": True,
            "oneOf": [
                {"type": "string", "default": ""},
                {"type": "array", "items": {"type": "integer"}, "minItems": 1},
            ],
        },
    },
}

# Stripe's webhook endpoints: one API version listed many times in an enum (ruff PIE796 in the
# model's Enum)
STRIPE_WEBHOOK = {
    "type": "object",
    "properties": {
        "api_version": {"type": "string", "enum": ["2025-10-15", "2025-10-15", "2024-06-20"]}
    },
}

DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.0",
    "info": {"title": "Fragments", "version": "1"},
    "servers": [{"url": "https://api.test/v1"}],
    "paths": {
        "/completions": {
            "post": {
                "operationId": "createCompletion",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/CreateCompletionRequest"}
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/webhook_endpoints": {
            "post": {
                "operationId": "postWebhookEndpoints",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/WebhookEndpoint"}
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
    "components": {
        "schemas": {"CreateCompletionRequest": OPENAI_REQUEST, "WebhookEndpoint": STRIPE_WEBHOOK}
    },
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    folder = tmp_path_factory.mktemp("fragments")
    (folder / "pyproject.toml").write_text(SETTINGS)
    (folder / "fragments.json").write_text(json.dumps(DOCUMENT, indent=2))
    imported = cli("import", "openapi", "fragments.json", "--specs", "specs", cwd=folder)
    assert imported.exit_code == 0, imported.stderr
    built = cli("build", "specs", "--out", "fragment_tools", cwd=folder)
    assert built.exit_code == 0 and "error[" not in built.stderr, built.stderr
    return folder, imported


def shared(folder: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (folder / "specs" / "_fragments" / f"{name}.json").read_text()
    )
    return data


def test_the_package_passes_mypy_ruff_and_ruff_format(project: tuple[Path, Any]) -> None:
    folder, _ = project
    quality(folder, "fragment_tools")


def test_a_default_its_own_type_refuses_is_left_out_and_said(project: tuple[Path, Any]) -> None:
    # `max_tokens: {type: integer, default: inf}` made `max_tokens: StrictInt = Field("inf")`
    folder, imported = project
    request = shared(folder, "CreateCompletionRequest")
    assert request["properties"]["max_tokens"] == {"type": "integer"}
    assert (
        "fragments.json#/components/schemas/CreateCompletionRequest/properties/max_tokens: "
        "default 'inf' is not of its type integer: left out"
    ) in imported.stderr
    # a default that fits stays, null included where nullable makes it fit
    assert request["properties"]["stop"]["default"] is None
    assert request["properties"]["prompt"]["default"] == "<|endoftext|>"


def test_a_default_beside_a_oneof_stays_on_its_field(project: tuple[Path, Any]) -> None:
    # the root model made of the array branch took the property's default: `Field(None)` on a
    # `list[StrictStr]` root, `Field("<|endoftext|>")` on a `list[StrictInt]` one
    folder, _ = project
    models = (folder / "fragment_tools" / "models" / "createcompletion.py").read_text()
    assert "class Stop(RootModel[list[StrictStr]]):" in models
    assert "class Prompt(RootModel[list[StrictInt]]):" in models
    assert models.count('Field("<|endoftext|>"') == 1  # the field's, not the root model's
    assert "root: list[StrictStr] = Field(..., max_length=4, min_length=1)" in models


def test_an_enum_listing_a_value_twice_gives_each_member_once(project: tuple[Path, Any]) -> None:
    folder, _ = project
    models = (folder / "fragment_tools" / "models" / "postwebhookendpoints.py").read_text()
    assert models.count('= "2025-10-15"') == 1 and models.count('= "2024-06-20"') == 1
    # the spec keeps what the document says; only the model's Enum is made of distinct values
    spec = shared(folder, "WebhookEndpoint")
    assert spec["properties"]["api_version"]["enum"] == ["2025-10-15", "2025-10-15", "2024-06-20"]
