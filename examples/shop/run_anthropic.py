"""The shop conversation through Anthropic Messages (`Toolkit.run_anthropic`).

With ANTHROPIC_API_KEY set it calls the API (model: $ANTHROPIC_MODEL, default claude-sonnet-4-5);
otherwise the official client talks to scripted model turns served locally.
"""

from __future__ import annotations

import os

from conversation import PROMPT, TURNS, report
from handlers import ShopTools
from shop_tools import Toolkit


def main() -> None:
    import anthropic
    import scripted

    if os.environ.get("ANTHROPIC_API_KEY"):
        client = anthropic.Anthropic()
        model = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    else:
        (client, _), model = scripted.client_for("anthropic", TURNS), "scripted"
    run = Toolkit(ShopTools()).run_anthropic(
        client,
        model=model,
        max_tokens=1024,
        messages=[{"role": "user", "content": PROMPT}],
        max_turns=8,
    )
    report("anthropic", run)
    print(run.response.content[-1].text)


if __name__ == "__main__":
    main()
