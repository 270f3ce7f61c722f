"""The weather tools as a remote MCP server over streamable HTTP, behind a bearer token.

    MCP_TOKENS=secret uvicorn serve_http:app --host 0.0.0.0 --port 8000 --workers 4

(run from examples/weather). Stateless: any worker or replica answers any request.

It fails closed: without a token in MCP_TOKENS (unset, empty, or misspelled) it refuses to
start, unless MCP_ALLOW_ANONYMOUS=1 says that anyone who reaches it may call its tools (for a
server bound to 127.0.0.1 on a developer's machine, say).
"""

from __future__ import annotations

import os

from handlers import WeatherTools
from toolnexus_runtime.mcp import asgi_app
from tools import Toolkit

tokens = [t.strip() for t in os.environ.get("MCP_TOKENS", "").split(",") if t.strip()]
anonymous = os.environ.get("MCP_ALLOW_ANONYMOUS") == "1"
if not tokens and not anonymous:
    raise SystemExit(
        "serve_http: MCP_TOKENS names no bearer token (a comma-separated list), so anyone could "
        "call these tools. Set MCP_TOKENS, or MCP_ALLOW_ANONYMOUS=1 to serve without a token."
    )
app = asgi_app(Toolkit(WeatherTools()), bearer_tokens=tokens, allow_anonymous=anonymous)
