"""OpenAI Agents SDK: the generated tools as FunctionTools, driven by a scripted Model that returns
function_call items (a bad argument, the corrected call, then the answer). No network.

python examples/frameworks/openai_agents_sdk.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _weather import toolkit
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from toolnexus_runtime.integrations import openai_agents_tools


def call(call_id: str, arguments: dict[str, Any]) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        call_id=call_id,
        name="get_weather",
        arguments=json.dumps(arguments),
        id=f"fc_{call_id}",
        status="completed",
    )


class ScriptedModel(Model):
    turn = 0

    async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any) -> Any:
        self.turn += 1
        last = input[-1] if isinstance(input, list) else {}
        if self.turn == 1:
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
            items: list[Any] = [call("c1", {"town": "Oslo"})]
        elif self.turn == 2:
            print(f"  model got: {str(last.get('output'))[:70]}...")
            items = [call("c2", {"city": "Oslo"})]
        else:
            text = ResponseOutputText(type="output_text", text="21C, clear.", annotations=[])
            items = [
                ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        return ModelResponse(output=items, usage=Usage(), response_id=None)

    def stream_response(self, *a: Any, **k: Any) -> Any:
        raise NotImplementedError


if __name__ == "__main__":
    print("== OpenAI Agents SDK")
    set_tracing_disabled(True)  # the SDK's own trace export needs an OpenAI key
    agent = Agent(name="weather", model=ScriptedModel(), tools=openai_agents_tools(toolkit()))
    result = asyncio.run(Runner.run(agent, "Weather in Oslo?"))
    print(f"  answer: {result.final_output}")
