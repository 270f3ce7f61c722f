"""The offline token estimate (toolnexus_gen/pipeline/tokens.py) against OpenAI's o200k_base
tokenizer itself (tiktoken, with the encoding file shipped in tests/data and checked by tiktoken
against its published SHA-256), on a test set the estimate was not calibrated on: the 77 tools of
the seven MCP servers in tests/fixtures/mcp, in each target's entry shape."""

from __future__ import annotations

import hashlib
import json
import lzma
import statistics
from typing import Any

import pytest
from conftest import ROOT

from toolnexus_gen.pipeline.tokens import estimate

URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@pytest.fixture(scope="module")
def o200k(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tiktoken = pytest.importorskip("tiktoken")
    cache = tmp_path_factory.mktemp("tiktoken")
    data = lzma.decompress((ROOT / "tests/data/o200k_base.tiktoken.xz").read_bytes())
    (cache / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        return tiktoken.get_encoding("o200k_base")  # tiktoken checks the file's SHA-256


def entries() -> list[Any]:
    """Each MCP sample tool as every target's file holds an entry."""
    found = []
    for path in sorted((ROOT / "tests/fixtures/mcp").glob("*.json")):
        data = json.loads(path.read_text())
        for tool in data["tools"] if isinstance(data, dict) else data:
            name, text, schema = tool["name"], tool.get("description", ""), tool["inputSchema"]
            found += [
                {"name": name, "description": text, "parametersJsonSchema": schema},
                {
                    "type": "function",
                    "function": {"name": name, "description": text, "parameters": schema},
                },
                {
                    "type": "function",
                    "name": name,
                    "description": text,
                    "parameters": schema,
                    "strict": False,
                },
                {"name": name, "description": text, "input_schema": schema},
                tool,
                {"toolSpec": {"name": name, "description": text, "inputSchema": {"json": schema}}},
            ]
    return found


def test_the_estimate_is_close_to_o200k_base(o200k: Any) -> None:
    pairs = [
        (
            estimate(entry),
            len(o200k.encode(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))),
        )
        for entry in entries()
    ]
    errors = [guess / real - 1 for guess, real in pairs]
    assert len(pairs) == 77 * 6
    mean_abs = statistics.mean(abs(e) for e in errors)
    total = sum(g for g, _ in pairs) / sum(r for _, r in pairs) - 1
    # the docs (Many tools, Token budgets) give these figures; a regression of the estimate shows here
    assert mean_abs < 0.05, mean_abs
    assert abs(total) < 0.03, total
    assert max(abs(e) for e in errors) < 0.25
