"""Serve the shop tools over MCP on stdio (`serve_mcp`), for any MCP client.

python examples/shop/serve_mcp.py      # e.g. as the command of an MCP client's server entry
"""

from __future__ import annotations

import conversation  # noqa: F401  (puts shop_tools on the import path)
from handlers import ShopTools
from shop_tools import Toolkit, serve_mcp

if __name__ == "__main__":
    serve_mcp(Toolkit(ShopTools()), name="shop")
