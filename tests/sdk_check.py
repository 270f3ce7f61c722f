"""Each provider file judged by that provider's official SDK types (shared by several tests)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter


def assert_typed_dict(value: dict[str, Any], typed_dict: Any) -> None:
    """Valid for the SDK's TypedDict, and carrying no key the TypedDict does not declare."""
    TypeAdapter(typed_dict).validate_python(value, strict=True)
    declared = set(typed_dict.__annotations__)
    assert set(value) <= declared, set(value) - declared
    assert typed_dict.__required_keys__ <= set(value)


def gemini(value: Any) -> None:
    from google.genai import types

    assert (
        isinstance(value, list) and len(value) == 1 and list(value[0]) == ["functionDeclarations"]
    )
    types.Tool.model_validate(value[0])  # the SDK's models forbid unknown keys


def openai(value: Any) -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.shared_params import FunctionDefinition

    for entry in value:
        assert_typed_dict(entry, ChatCompletionFunctionToolParam)
        assert_typed_dict(entry["function"], FunctionDefinition)


def openai_responses(value: Any) -> None:
    from openai.types.responses import FunctionToolParam

    for entry in value:
        assert_typed_dict(entry, FunctionToolParam)
        assert entry["strict"] in (True, False)


def anthropic(value: Any) -> None:
    from anthropic.types import ToolParam

    for entry in value:
        assert_typed_dict(entry, ToolParam)
        assert entry["input_schema"]["type"] == "object"


def mcp(value: Any) -> None:
    from mcp import types

    for entry in value:
        tool = types.Tool.model_validate(entry)
        assert tool.model_dump(by_alias=True, exclude_none=True, mode="json") == entry


def bedrock(value: Any) -> None:
    import botocore.session
    from botocore.validate import validate_parameters

    shape = (
        botocore.session.get_session()
        .get_service_model("bedrock-runtime")
        .operation_model("Converse")
        .input_shape
    )
    request = {
        "modelId": "anthropic.claude",
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": value,
    }
    validate_parameters(request, shape)  # raises ParamValidationError on any deviation


CHECKS = {
    "gemini": gemini,
    "openai": openai,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "mcp": mcp,
    "bedrock": bedrock,
}


def assert_accepted(schemas: dict[str, Any]) -> None:
    """Every provider file present in {target: parsed JSON} is accepted by its SDK."""
    for target, value in schemas.items():
        if target in CHECKS:
            CHECKS[target](value)
