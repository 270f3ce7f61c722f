"""The shop conversation through OpenAI Chat Completions (`Toolkit.run_openai`).

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
        (client, _), model = scripted.client_for("openai", TURNS), "scripted"
    run = Toolkit(ShopTools()).run_openai(
        client, model=model, messages=[{"role": "user", "content": PROMPT}], max_turns=8
    )
    report("openai", run)
    print(run.response.choices[0].message.content)


if __name__ == "__main__":
    main()
