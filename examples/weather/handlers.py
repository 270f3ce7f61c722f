"""The user's side of the weather example: one method per tool (this file is not generated)."""

from __future__ import annotations

from tools import GetWeatherArgs, NowArgs, ToolContext, ToolHandlers


class WeatherTools(ToolHandlers):
    async def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> str:
        return f"{args.city}: 21C, clear"

    def now(self, args: NowArgs, ctx: ToolContext) -> str:
        return "12:00"
