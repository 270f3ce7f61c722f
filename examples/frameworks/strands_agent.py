"""Strands Agents: the generated tools on a strands Agent, its model a scripted strands Model
streaming Bedrock-shaped events (a bad argument, the corrected call, then the answer). No network.

.venvs/strands/bin/python examples/frameworks/strands_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

import json
from typing import Any

from _weather import toolkit
from strands import Agent
from strands.models import Model
from toolnexus_runtime.integrations import strands_tools


class Scripted(Model):
    def __init__(self) -> None:
        self.turn = 0

    def update_config(self, **config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, *a: Any, **k: Any) -> Any:
        self.turn += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.turn == 1:
            print(f"  model sees tools: {[s['name'] for s in tool_specs or ()]}")
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
            async for event in use("c1", {"town": "Oslo"}):
                yield event
        elif self.turn == 2:
            result = messages[-1]["content"][0]["toolResult"]
            print(f"  model got: {result['status']}: {result['content'][0]['text']}")
            async for event in use("c2", {"city": "Oslo"}):
                yield event
        else:
            yield {"contentBlockDelta": {"delta": {"text": "It is 21C and clear in Oslo."}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


async def use(call_id: str, arguments: dict[str, Any]) -> Any:
    yield {
        "contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": "get_weather"}}}
    }
    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(arguments)}}}}
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "tool_use"}}


if __name__ == "__main__":
    print("== Strands Agents")
    agent = Agent(model=Scripted(), tools=strands_tools(toolkit()), callback_handler=None)
    print(f"  answer: {str(agent('Weather in Oslo?')).strip()}")
