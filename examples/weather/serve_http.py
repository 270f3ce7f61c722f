"""The weather tools as a remote MCP server over streamable HTTP, behind a bearer token.

    MCP_TOKENS=secret uvicorn serve_http:app --host 0.0.0.0 --port 8000 --workers 4

(run from examples/weather). Stateless: any worker or replica answers any request.
"""

from __future__ import annotations

import os

from handlers import WeatherTools
from toolnexus_runtime.mcp import asgi_app
from tools import Toolkit

tokens = [t for t in os.environ.get("MCP_TOKENS", "").split(",") if t]
app = asgi_app(Toolkit(WeatherTools()), bearer_tokens=tokens or None)
