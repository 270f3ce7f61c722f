"""The runtime's worker threads for sync handlers on asyncio (portal._Workers), as an attacker or
a careless handler would drive them: whatever a handler raises reaches its caller."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from toolnexus_runtime import ToolContext, Toolkit, ToolResult, ToolSpec


class Empty(BaseModel):
    pass


class Handlers:
    def stop(self, args: Empty, ctx: ToolContext) -> str:
        raise StopIteration  # a next() on an exhausted iterator, left uncaught

    def fine(self, args: Empty, ctx: ToolContext) -> str:
        return "fine"


def test_a_sync_handler_raising_stop_iteration_fails_instead_of_hanging() -> None:
    # asyncio refuses StopIteration in a Future: handed over as is, the call never finished.
    tools = {name: ToolSpec(name, Empty, name) for name in ("stop", "fine")}
    tk = Toolkit(Handlers(), tools=tools, max_threads=1, timeout=30)  # a deadline: a thread

    async def main() -> tuple[ToolResult, ToolResult]:
        failed = await asyncio.wait_for(tk.execute("stop", {}), 5)
        after = await asyncio.wait_for(tk.execute("fine", {}), 5)  # its slot came back
        return failed, after

    failed, after = asyncio.run(main())
    assert failed.is_error and failed.error_type == "RuntimeError"  # as anyio hands it over
    assert after.output == "fine" and not after.is_error
