"""The to-do API as an agent's tools, from todo.openapi.yaml alone: no handler written.

`toolnexus-gen import openapi todo.openapi.yaml` wrote specs/ (one per operation, each bound to
its endpoint) and `toolnexus-gen build` wrote todo_tools/. Here the service runs locally
(server.py), the token comes from the environment as the import summary said (TODO_BEARER_AUTH),
and a tool loop runs on the official OpenAI client: with OPENAI_API_KEY set against the API
(model: $OPENAI_MODEL, default gpt-5-mini), otherwise against scripted model turns.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # todo_tools and server; ../scripted.py

import server  # noqa: E402
from todo_tools import ToolHandlers, Toolkit  # noqa: E402

PROMPT = "Add 'Buy milk' due 2026-06-01 and 'Call Asha' to my list, then tick off the milk."
TURNS = [  # one call a turn: the ids the service gives depend on the order
    [("call_1", "createTodo", {"title": "Buy milk", "due": "2026-06-01"})],
    [("call_2", "createTodo", {"title": "Call Asha"})],
    [("call_3", "updateTodo", {"todoId": 1, "done": True})],
    [("call_4", "listTodos", {"done": False})],
    "Done: 'Buy milk' is ticked off; 'Call Asha' is still open.",
]


def main() -> None:
    import openai
    import scripted

    token = "demo-token-0123456789"
    os.environ["TODO_BEARER_AUTH"] = token  # what the import summary named; never in a file
    base_url, todos, httpd = server.start(token)
    if os.environ.get("OPENAI_API_KEY"):
        client, model = openai.OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-5-mini")
    else:
        (client, _), model = scripted.client_for("openai", TURNS), "scripted"
    # the document's server is todo.example.com; this run talks to the local one instead
    with Toolkit(ToolHandlers(), base_url=base_url) as tk:
        run = tk.run_openai(
            client, model=model, messages=[{"role": "user", "content": PROMPT}], max_turns=8
        )
        for call, result in run.tool_calls:
            print(f"{call.name}{'!' if result.is_error else ''}: {result.output}")
        print(run.response.choices[0].message.content)
        denied = tk.execute_sync("deleteTodo", {"todoId": 99})
        print(f"deleteTodo(99): {denied.output}")
    httpd.shutdown()
    state = sorted((t["title"], t["done"]) for t in todos.items.values())
    assert state == [("Buy milk", True), ("Call Asha", False)], state
    print("todo demo: an OpenAPI document, four tools, no handler code")


if __name__ == "__main__":
    main()
