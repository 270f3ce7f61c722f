"""A small third-party MCP server for the example: a notebook, served over stdio with the
official SDK's `MCPServer`. toolnexus-gen knows it only through mcp.json: `toolnexus-gen sync`
snapshots its tools into specs/notes/, and the Toolkit calls them here at run time."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer(
    "notes", instructions="A notebook: add notes, search them, read one.", log_level="CRITICAL"
)
NOTES: dict[str, str] = {
    "tea": "Assam for mornings, Darjeeling after lunch.",
    "trains": "The 07:40 to Chennai leaves from platform 3.",
}


class Hit(BaseModel):
    title: str
    preview: str


class Hits(BaseModel):
    hits: list[Hit]


@server.tool()
def search_notes(query: str, limit: int = 5) -> Hits:
    """Find notes whose title or text contains the query (case-insensitive)."""
    found = [
        Hit(title=title, preview=text[:40])
        for title, text in sorted(NOTES.items())
        if query.lower() in f"{title} {text}".lower()
    ]
    return Hits(hits=found[:limit])


@server.tool()
def read_note(title: str) -> str:
    """The full text of one note."""
    if title not in NOTES:
        raise ToolError(f"no note titled {title!r}; search_notes lists the titles")
    return NOTES[title]


@server.tool()
def add_note(title: str, text: str) -> str:
    """Add a note, or replace the note with that title."""
    NOTES[title] = text
    return f"saved {title!r} ({len(NOTES)} notes)"


if __name__ == "__main__":
    server.run()
