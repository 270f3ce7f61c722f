"""One local tool and one upstream MCP server behind one generated Toolkit.

notes_tools/ is built from specs/: word_count.yaml (our own tool, handlers.py) and specs/notes/,
the snapshot `toolnexus-gen sync` took of the tools of server.py (listed in mcp.json). At run
time the Toolkit starts server.py on the first call to one of its tools and keeps that session
for the calls that follow; `async with` closes it. A tool loop then calls both kinds of tool in
one turn, against scripted model turns (nothing leaves this machine).

Run with `make demo` (or `python demo.py` from this folder).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # scripted.py, shared by the examples
os.environ.setdefault("PYTHON", sys.executable)  # mcp.json starts the server with ${PYTHON}

import scripted  # noqa: E402
from handlers import NoteTools  # noqa: E402
from notes_tools import Toolkit  # noqa: E402

QUESTION = "When does my train to Chennai leave, and how long is that note?"
TURNS: list[scripted.Turn] = [
    [
        ("call_1", "notes_search_notes", {"query": "chennai"}),
        ("call_2", "word_count", {"text": "The 07:40 to Chennai leaves from platform 3."}),
    ],
    [("call_3", "notes_read_note", {"title": "trains"})],
    "Your train to Chennai leaves at 07:40 from platform 3 (a note of 8 words).",
]


async def main() -> None:
    async with Toolkit(NoteTools(), mcp_config=HERE / "mcp.json") as tk:
        hits = await tk.execute("notes_search_notes", {"query": "tea"})
        assert hits.data == {
            "hits": [{"title": "tea", "preview": "Assam for mornings, Darjeeling after lun"}]
        }
        print(f"search_notes (on the server): {hits.output}")
        saved = await tk.execute("notes_add_note", {"title": "plants", "text": "Water on Sundays."})
        print(f"add_note: {saved.output}")
        missing = await tk.execute("notes_read_note", {"title": "boats"})
        assert missing.is_error and "no note titled 'boats'" in missing.output
        print(f"read_note, an error the server reported: {missing.output}")
        wrong = await tk.execute("notes_read_note", {"name": "tea"})  # answered here, never sent
        assert wrong.is_error and "title: Field required" in wrong.output
        print(f"read_note, arguments the typed model refused: {wrong.output}")

        client, _ = scripted.client_for("openai", TURNS, asynchronous=True)
        run = await tk.arun_openai(
            client, model="scripted", messages=[{"role": "user", "content": QUESTION}]
        )
        calls = [(call.name, result.is_error) for call, result in run.tool_calls]
        assert calls == [
            ("notes_search_notes", False),
            ("word_count", False),
            ("notes_read_note", False),
        ], calls
        print(f"openai loop: {run.turns} turns; calls: {', '.join(name for name, _ in calls)}")
        print(run.response.choices[0].message.content)
    print("notes demo: one local tool and one MCP server in one toolkit")


if __name__ == "__main__":
    asyncio.run(main())
