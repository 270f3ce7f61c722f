"""pydantic-ai: the generated tools as a toolset, driven by pydantic-ai's FunctionModel (scripted:
a bad argument first, then the corrected call, then the answer). No network.

python examples/frameworks/pydantic_ai_agent.py
"""

from __future__ import annotations

from typing import Any

from _weather import toolkit
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from toolnexus_runtime.integrations import pydantic_ai_toolset


def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
    turn = len(messages)
    if turn == 1:
        print(f"  model sees tools: {[t.name for t in info.function_tools]}")
        print("  model: get_weather(town='Oslo')   (wrong argument name)")
        return ModelResponse(parts=[ToolCallPart("get_weather", {"town": "Oslo"}, "call_1")])
    if turn == 3:
        print(f"  model got a retry prompt: {str(messages[-1].parts[0].content)[:70]}...")
        return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Oslo"}, "call_2")])
    return ModelResponse(parts=[TextPart("It is 21C and clear in Oslo.")])


if __name__ == "__main__":
    print("== pydantic-ai")
    agent = Agent(FunctionModel(model), toolsets=[pydantic_ai_toolset(toolkit())])
    print(f"  answer: {agent.run_sync('Weather in Oslo?').output}")
