"""Google ADK: the generated tools on an LlmAgent, run by ADK's InMemoryRunner, its model a
scripted BaseLlm (a bad argument, the corrected call, then the answer). No network.

.venvs/google_adk/bin/python examples/frameworks/google_adk_agent.py   (made by `make frameworks`)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from _weather import toolkit
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from toolnexus_runtime.integrations import google_adk_toolset


class Scripted(BaseLlm):
    model: str = "scripted"
    turn: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.turn += 1
        if self.turn == 1:
            tools = [
                d.name
                for t in llm_request.config.tools or ()
                for d in t.function_declarations or ()
            ]
            print(f"  model sees tools: {tools}")
            print("  model: get_weather(town='Oslo')   (wrong argument name)")
            part = types.Part.from_function_call(name="get_weather", args={"town": "Oslo"})
        elif self.turn == 2:
            reply = llm_request.contents[-1].parts[0].function_response
            print(f"  model got: {reply.response}")
            part = types.Part.from_function_call(name="get_weather", args={"city": "Oslo"})
        else:
            part = types.Part(text="It is 21C and clear in Oslo.")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def main() -> None:
    agent = LlmAgent(name="weather", model=Scripted(), tools=[google_adk_toolset(toolkit())])
    runner = InMemoryRunner(agent=agent, app_name="weather")
    session = await runner.session_service.create_session(app_name="weather", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            print(f"  answer: {event.content.parts[0].text}")


if __name__ == "__main__":
    print("== Google ADK")
    asyncio.run(main())
