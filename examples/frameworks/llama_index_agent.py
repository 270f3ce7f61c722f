"""LlamaIndex: the generated tools in a FunctionAgent, its LLM LlamaIndex's MockFunctionCallingLLM
with a scripted response generator (a bad argument, the corrected call, then the answer).
No network.

.venvs/llama_index/bin/python examples/frameworks/llama_index_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

import asyncio
from typing import Any

from _weather import toolkit
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from toolnexus_runtime.integrations import llama_index_tools

turns: list[int] = []


def model(messages: Any, **kwargs: Any) -> ChatMessage:
    turns.append(1)
    if len(turns) == 1:
        print(f"  model sees tools: {[t.metadata.name for t in kwargs.get('tools') or ()]}")
        print("  model: get_weather(town='Oslo')   (wrong argument name)")
        call = ToolCallBlock(
            tool_call_id="c1", tool_name="get_weather", tool_kwargs={"town": "Oslo"}
        )
        return ChatMessage(role="assistant", blocks=[call])
    if len(turns) == 2:
        print(f"  model got: {messages[-1].content}")
        call = ToolCallBlock(
            tool_call_id="c2", tool_name="get_weather", tool_kwargs={"city": "Oslo"}
        )
        return ChatMessage(role="assistant", blocks=[call])
    return ChatMessage(role="assistant", content="It is 21C and clear in Oslo.")


async def main() -> None:
    llm = MockFunctionCallingLLM(response_generator=model)
    agent = FunctionAgent(tools=llama_index_tools(toolkit()), llm=llm)
    print(f"  answer: {await agent.run(user_msg='Weather in Oslo?')}")


if __name__ == "__main__":
    print("== LlamaIndex")
    asyncio.run(main())
