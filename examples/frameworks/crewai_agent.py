"""CrewAI: the generated tools on an Agent, run by `Agent.kickoff`, its LLM a scripted BaseLLM
with native function calling (a bad argument, the corrected call, then the answer). No network.

.venvs/crewai/bin/python examples/frameworks/crewai_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

import json
import os
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from _weather import toolkit  # noqa: E402
from crewai import Agent  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from toolnexus_runtime.integrations import crewai_tools  # noqa: E402


class Scripted(BaseLLM):  # type: ignore[misc]
    turn: int = 0

    def call(self, messages: Any, tools: Any = None, *args: Any, **kwargs: Any) -> Any:
        self.turn += 1
        if self.turn == 1:
            print(f"  model sees tools: {[t['function']['name'] for t in tools or ()]}")
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
            return [call("c1", {"town": "Oslo"})]
        if self.turn == 2:
            print(f"  model got: {messages[-1]['content']}")
            return [call("c2", {"city": "Oslo"})]
        return "It is 21C and clear in Oslo."

    def supports_function_calling(self) -> bool:
        return True


def call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


if __name__ == "__main__":
    print("== CrewAI")
    agent = Agent(
        role="weather assistant",
        goal="answer weather questions",
        backstory="-",
        llm=Scripted(model="scripted"),
        tools=crewai_tools(toolkit()),
    )
    print(f"  answer: {agent.kickoff('Weather in Oslo?').raw}")
