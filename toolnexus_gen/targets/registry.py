"""The targets by name, light on purpose: what the configuration, the command line and the
generated Python need to know about each provider (its options, its Python type) without importing
it, so `--version`, option errors and the no-op fast path stay instant. The targets themselves
(`toolnexus_gen.targets.TARGETS`) are imported on first use.

Adding a provider: its module in this folder (exporting `TARGET`), a runtime module in
toolnexus_runtime/providers, and one line in INFO below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GEMINI_TRANSFORMS = ("const_to_enum", "nullable", "strip_meta", "inline_refs", "describe")
JSON_SCHEMA_TRANSFORMS = ("strip_meta", "inline_refs", "describe")
STRICT_TRANSFORMS = (*JSON_SCHEMA_TRANSFORMS, "strictify")  # targets with a strict mode


@dataclass(frozen=True)
class TargetInfo:
    options: dict[str, tuple[str, ...]]  # each option and its allowed values
    python_type: str  # what to_<target>() returns, as generated Python spells it
    python_doc: str  # what to_<target>() returns, in words


LIST = "list[dict[str, Any]]"
INFO: dict[str, TargetInfo] = {
    "gemini": TargetInfo(
        {"schema_field": ("parameters", "parametersJsonSchema"), "transforms": GEMINI_TRANSFORMS},
        LIST,
        "Gemini `tools` (one functionDeclarations wrapper)",
    ),
    "openai": TargetInfo(
        {"transforms": STRICT_TRANSFORMS}, LIST, "OpenAI Chat Completions `tools`"
    ),
    "openai_responses": TargetInfo(
        {"transforms": STRICT_TRANSFORMS}, LIST, "OpenAI Responses `tools`"
    ),
    "anthropic": TargetInfo({"transforms": STRICT_TRANSFORMS}, LIST, "Anthropic Messages `tools`"),
    "mcp": TargetInfo({"transforms": JSON_SCHEMA_TRANSFORMS}, LIST, "MCP `tools/list` tools"),
    "bedrock": TargetInfo(
        {"transforms": JSON_SCHEMA_TRANSFORMS}, "dict[str, Any]", "Bedrock Converse `toolConfig`"
    ),
}
NAMES: tuple[str, ...] = tuple(INFO)
OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {name: info.options for name, info in INFO.items()}

# profile "reach" (the project's `profile = "reach"`, or a spec's own `profile: reach`): these
# transforms join each target's own, where the target offers them, and name aliases are on.
REACH_TRANSFORMS = ("strictify", "describe")


def reach_options(target: str, options: dict[str, Any]) -> dict[str, Any]:
    """A target's options under profile "reach": its transforms plus REACH_TRANSFORMS."""
    transforms = list(options.get("transforms", ()))
    for transform in REACH_TRANSFORMS:
        if transform in OPTIONS[target]["transforms"] and transform not in transforms:
            transforms.append(transform)
    return {**options, "transforms": transforms}
