"""smolagents: the generated tools in a ToolCallingAgent, its model a scripted smolagents Model (a
bad argument, the corrected call, then smolagents' final_answer). No network.

.venvs/smolagents/bin/python examples/frameworks/smolagents_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

from typing import Any

from _weather import toolkit
from smolagents import ToolCallingAgent
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from toolnexus_runtime.integrations import smolagents_tools


class Scripted(Model):
    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        self.turn = 0

    def generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatMessage:
        self.turn += 1
        if self.turn == 1:
            print(f"  model sees tools: {[t.name for t in kwargs.get('tools_to_call_from') or ()]}")
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
            return call("get_weather", {"town": "Oslo"})
        if self.turn == 2:
            print(f"  model got: {messages[-1].content[0]['text'].splitlines()[1]}")
            return call("get_weather", {"city": "Oslo"})
        return call("final_answer", {"answer": "It is 21C and clear in Oslo."})


def call(name: str, arguments: dict[str, Any]) -> ChatMessage:
    function = ChatMessageToolCallFunction(name=name, arguments=arguments)
    tool_call = ChatMessageToolCall(function=function, id=f"c_{name}", type="function")
    return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[tool_call])


if __name__ == "__main__":
    print("== smolagents")
    agent = ToolCallingAgent(tools=smolagents_tools(toolkit()), model=Scripted(), verbosity_level=0)
    print(f"  answer: {agent.run('Weather in Oslo?')}")
