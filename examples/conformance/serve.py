"""Serve the conformance tools over MCP streamable HTTP on 127.0.0.1 until interrupted.

    python serve.py PORT [--sessions]
    python serve.py --stdio

Stateless by default, as `asgi_app` serves; `--sessions` keeps sessions (asgi_app(...,
stateless=False)). No token: the server listens on the loopback interface only, for the suite.
`--stdio` serves the same tools on stdio (`serve_mcp`), as an upstream server for tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import uvicorn  # noqa: E402
from conformance_tools import Toolkit  # noqa: E402
from handlers import ConformanceTools  # noqa: E402
from toolnexus_runtime.mcp import asgi_app, serve_mcp  # noqa: E402


def main() -> None:
    if sys.argv[1:] == ["--stdio"]:
        serve_mcp(Toolkit(ConformanceTools()), name="toolnexus-conformance", version="1.0.0")
        return
    port = int(sys.argv[1])
    app = asgi_app(
        Toolkit(ConformanceTools()),
        allow_anonymous=True,
        stateless="--sessions" not in sys.argv[2:],
        name="toolnexus-conformance",
        version="1.0.0",
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
