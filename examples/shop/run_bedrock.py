"""The shop conversation through Bedrock Converse (`Toolkit.run_bedrock`).

With AWS credentials and BEDROCK_MODEL_ID set it calls Bedrock; otherwise the boto3 client is
stubbed (botocore's Stubber, which still validates every request against the Converse API).
"""

from __future__ import annotations

import os

from conversation import PROMPT, TURNS, report
from handlers import ShopTools
from shop_tools import Toolkit


def main() -> None:
    import boto3
    import scripted

    if os.environ.get("BEDROCK_MODEL_ID"):
        client, model = boto3.client("bedrock-runtime"), os.environ["BEDROCK_MODEL_ID"]
    else:
        (client, _), model = scripted.client_for("bedrock", TURNS), "scripted"
    run = Toolkit(ShopTools()).run_bedrock(
        client,
        modelId=model,
        messages=[{"role": "user", "content": [{"text": PROMPT}]}],
        max_turns=8,
    )
    report("bedrock", run)
    print(run.response["output"]["message"]["content"][0]["text"])


if __name__ == "__main__":
    main()
