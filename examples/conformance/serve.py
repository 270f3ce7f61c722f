"""Serve the conformance tools over MCP streamable HTTP on 127.0.0.1 until interrupted.

    python serve.py PORT [--sessions]

Stateless by default, as `asgi_app` serves; `--sessions` keeps sessions (asgi_app(...,
stateless=False)). No token: the server listens on the loopback interface only, for the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import uvicorn  # noqa: E402
from conformance_tools import Toolkit  # noqa: E402
from handlers import ConformanceTools  # noqa: E402
from toolnexus_runtime.mcp import asgi_app  # noqa: E402


def main() -> None:
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
