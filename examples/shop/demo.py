"""Every provider script of the shop example, against scripted model turns (no API key needed)."""

from __future__ import annotations

import os

import run_anthropic
import run_bedrock
import run_gemini
import run_openai
import run_openai_responses

if __name__ == "__main__":
    for key in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "BEDROCK_MODEL_ID",
    ):
        os.environ.pop(key, None)  # the demo never calls a real API
    for script in (
        run_openai,
        run_openai_responses,
        run_anthropic,
        run_gemini,
        run_bedrock,
    ):
        script.main()
    print("shop demo: five providers, one tool package")
