"""The shop conversation through the OpenAI Responses API (`Toolkit.run_openai_responses`).

With OPENAI_API_KEY set it calls the API (model: $OPENAI_MODEL, default gpt-5-mini); otherwise
the official client talks to scripted model turns served locally.
"""

from __future__ import annotations

import os

from conversation import PROMPT, TURNS, report
from handlers import ShopTools
from shop_tools import Toolkit


def main() -> None:
    import openai
    import scripted

    if os.environ.get("OPENAI_API_KEY"):
        client, model = openai.OpenAI(), os.environ.get("OPENAI_MODEL", "gpt-5-mini")
    else:
        (client, _), model = scripted.client_for("openai_responses", TURNS), "scripted"
    run = Toolkit(ShopTools()).run_openai_responses(client, model=model, input=PROMPT, max_turns=8)
    report("openai_responses", run)
    print(run.response.output_text)


if __name__ == "__main__":
    main()
