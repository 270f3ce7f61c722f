"""The shop conversation through Gemini `generate_content` (`Toolkit.run_gemini`).

With GEMINI_API_KEY set it calls the API (model: $GEMINI_MODEL, default gemini-2.5-flash);
otherwise the official client talks to scripted model turns served locally.
"""

from __future__ import annotations

import os

from conversation import PROMPT, TURNS, report
from handlers import ShopTools
from shop_tools import Toolkit


def main() -> None:
    import scripted
    from google import genai

    if os.environ.get("GEMINI_API_KEY"):
        client, model = (
            genai.Client(),
            os.environ.get("GEMINI_MODEL", "gemini-2.5-flash"),
        )
    else:
        (client, _), model = scripted.client_for("gemini", TURNS), "scripted"
    run = Toolkit(ShopTools()).run_gemini(client, model=model, contents=PROMPT, max_turns=8)
    report("gemini", run)
    print(run.response.text)


if __name__ == "__main__":
    main()
