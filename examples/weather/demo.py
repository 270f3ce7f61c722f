"""The seed's three examples, in Python, against the generated package in ./tools, the same
round trip for OpenAI Chat, the Responses API, Anthropic and Bedrock from recorded payloads, and
one full tool loop per provider through its official SDK client against scripted model turns
(served locally by ../scripted.py; nothing leaves this machine).

Run with `make demo` (which regenerates ./tools first).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # scripted.py, shared by the examples

from handlers import WeatherTools  # noqa: E402
from tools import ToolContext, Toolkit, to_gemini  # noqa: E402


def recorded(name: str) -> dict:
    return json.loads((HERE / "recorded" / f"{name}.json").read_text("utf-8"))


def example_1() -> None:
    """One tool, and the wrapper that surprises everyone."""
    schema = to_gemini()
    assert len(schema) == 1  # ONE element wrapping ALL declarations
    decls = schema[0]["functionDeclarations"]
    assert len(decls) == 2
    assert decls[0]["name"] == "get_weather"
    assert decls[0]["parameters"]["required"][0] == "city"
    assert "parameters" not in decls[1]  # `now` takes no arguments
    print(json.dumps(schema, indent=2))
    print(f"ok: 1 wrapper, {len(decls)} declarations")


def example_2(tk: Toolkit) -> None:
    """Feeding it straight into a generateContent body."""
    body = {
        "contents": [{"role": "user", "parts": [{"text": "what time is it?"}]}],
        "tools": tk.to_gemini(),
    }
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert "now" in names
    print(f"ok: {names[-1]}")


async def example_3(tk: Toolkit) -> None:
    """Round-tripping a functionCall part back to the tool."""
    part = {"functionCall": {"name": "get_weather", "args": {"city": "Chennai"}}}
    call = part["functionCall"]
    r = await tk.execute(call["name"], call["args"], ToolContext())
    reply = {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": call["name"],
                    "response": {"output": r.output},
                }
            }
        ],
    }
    assert reply["parts"][0]["functionResponse"]["response"]["output"] == "Chennai: 21C, clear"
    assert reply == tk.gemini_reply([part])  # the helper builds the same reply
    print(f"ok: {reply['parts'][0]['functionResponse']['name']}")


def provider_round_trips(tk: Toolkit) -> None:
    gemini = tk.gemini_reply(recorded("gemini"))
    print("gemini   ->", json.dumps(gemini))
    assert gemini["parts"][0]["functionResponse"]["id"] == "8f2b1a3c"

    chat = tk.openai_tool_messages(recorded("openai_chat"))
    print("openai   ->", json.dumps(chat))
    assert [m["tool_call_id"] for m in chat] == ["call_w1", "call_n1"]

    responses = tk.openai_responses_outputs(recorded("openai_responses"))
    print("responses->", json.dumps(responses))
    assert responses[0]["call_id"] == "call_r1"

    anthropic = tk.anthropic_tool_results(recorded("anthropic"))
    print("anthropic->", json.dumps(anthropic))
    assert [b["is_error"] for b in anthropic] == [False, True]  # the second call lacks `city`

    bedrock = tk.bedrock_tool_results(recorded("bedrock"))
    print("bedrock  ->", json.dumps(bedrock))
    assert bedrock[0]["toolResult"]["status"] == "success"


LOOP_SCRIPT = [
    [("call_1", "get_weather", {"city": "Chennai"}), ("call_2", "now", {})],
    [("call_3", "get_weather", {"town": "Chennai"})],  # a mistake the model then corrects
    [("call_4", "get_weather", {"city": "Chennai"})],
    "It is 21C and clear in Chennai, and the time is 12:00.",
]
LOOP_START = {
    "openai": {"model": "gpt-demo", "messages": [{"role": "user", "content": "Weather?"}]},
    "openai_responses": {"model": "gpt-demo", "input": "Weather?"},
    "anthropic": {"model": "claude-demo", "messages": [{"role": "user", "content": "Weather?"}]},
    "gemini": {"model": "gemini-demo", "contents": "Weather?"},
    "bedrock": {
        "modelId": "demo",
        "messages": [{"role": "user", "content": [{"text": "Weather?"}]}],
    },
}


def tool_loops(tk: Toolkit) -> None:
    import scripted

    for provider, start in LOOP_START.items():
        client, _ = scripted.client_for(provider, LOOP_SCRIPT)
        run = getattr(tk, f"run_{provider}")(client, **start, max_turns=8)
        calls = ", ".join(
            f"{call.name}{'!' if result.is_error else ''}" for call, result in run.tool_calls
        )
        print(f"{provider:17}{run.turns} turns, calls: {calls}; {len(run.messages)} messages")
        assert run.turns == 4 and [r.is_error for _, r in run.tool_calls] == [
            False,
            False,
            True,
            False,
        ]


def main() -> None:
    tk = Toolkit(WeatherTools())
    print("== seed example 1: to_gemini"), example_1()
    print("== seed example 2: generateContent body"), example_2(tk)
    print("== seed example 3: functionCall round trip"), asyncio.run(example_3(tk))
    print("== the same round trip for every provider (recorded responses)")
    provider_round_trips(tk)
    print("== one tool loop per provider, official SDK clients, scripted turns ('!' = error)")
    tool_loops(tk)
    print("demo: all round trips and loops ok")


if __name__ == "__main__":
    main()
