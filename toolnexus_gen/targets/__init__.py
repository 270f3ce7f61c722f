"""The provider targets. Adding a provider means adding a module here and a line below."""

from __future__ import annotations

from types import ModuleType

from . import anthropic, bedrock, gemini, mcp, openai, openai_responses

TARGETS: dict[str, ModuleType] = {
    module.NAME: module for module in (gemini, openai, openai_responses, anthropic, mcp, bedrock)
}
