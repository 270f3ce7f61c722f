"""The weather example's generated package and handlers, shared by the framework examples."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "weather"))

from tools import GetWeatherArgs, NowArgs, ToolContext, ToolHandlers, Toolkit  # noqa: E402


class Weather(ToolHandlers):
    async def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> str:
        print(
            f"  handler: get_weather(city={args.city!r}) call id {ctx.call_id} via {ctx.provider}"
        )
        return f"{args.city}: 21C, clear"

    def now(self, args: NowArgs, ctx: ToolContext) -> str:
        return "12:00"


def toolkit(**options: Any) -> Toolkit:
    return Toolkit(Weather(), **options)
