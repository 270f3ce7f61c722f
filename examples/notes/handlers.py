"""The example's own tool (started with `toolnexus-gen scaffold handlers.py`). The notes server's
tools need no method here: the Toolkit calls them on the server."""

from __future__ import annotations

from notes_tools import ToolContext, ToolHandlers, WordCountArgs


class NoteTools(ToolHandlers):
    def word_count(self, args: WordCountArgs, ctx: ToolContext) -> dict[str, int]:
        return {"words": len(args.text.split())}
