"""AutoGen: the generated tools on an AssistantAgent, its model client AutoGen's
ReplayChatCompletionClient (a bad argument, the corrected call, then the answer). No network.

.venvs/autogen/bin/python examples/frameworks/autogen_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _weather import toolkit
from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import CreateResult, FunctionExecutionResultMessage, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient
from toolnexus_runtime.integrations import autogen_tools

INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


class Scripted(ReplayChatCompletionClient):  # type: ignore[misc]
    async def create(self, messages: Any, *, tools: Any = (), **kwargs: Any) -> Any:
        results = [m for m in messages if isinstance(m, FunctionExecutionResultMessage)]
        if not results:
            print(f"  model sees tools: {[t['name'] for t in tools]}")
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
        elif len(results) == 1:
            (result,) = results[0].content
            print(f"  model got (is_error={result.is_error}): {result.content}")
        return await super().create(messages, tools=tools, **kwargs)


def call(call_id: str, arguments: dict[str, Any]) -> CreateResult:
    content = [FunctionCall(id=call_id, name="get_weather", arguments=json.dumps(arguments))]
    usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
    return CreateResult(finish_reason="function_calls", content=content, usage=usage, cached=False)


async def main() -> None:
    script = [
        call("c1", {"town": "Oslo"}),
        call("c2", {"city": "Oslo"}),
        "It is 21C and clear in Oslo.",
    ]
    agent = AssistantAgent(
        "weather",
        model_client=Scripted(script, model_info=INFO),
        tools=autogen_tools(toolkit()),
        max_tool_iterations=3,
    )
    result = await agent.run(task="Weather in Oslo?")
    print(f"  answer: {result.messages[-1].content}")


if __name__ == "__main__":
    print("== AutoGen")
    asyncio.run(main())
