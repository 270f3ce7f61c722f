"""Property: importing a provider file and building again gives that provider file back.

Provider files are drawn at random (names, descriptions with any printable text, schemas with
nested objects, enums, arrays, bounds), written in each provider's shape, imported, and built
for that provider alone.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from conftest import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolnexus_gen.toolspec.naming import python_names

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029"),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() == s and s != "")
LEAVES = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={"description": TEXT, "enum": st.lists(TEXT, min_size=1, max_size=4, unique=True)},
    ),
    st.fixed_dictionaries(
        {"type": st.just("integer")},
        optional={"minimum": st.integers(-5, 0), "maximum": st.integers(1, 99)},
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["number", "boolean"])}, optional={"description": TEXT}
    ),
    st.fixed_dictionaries(
        {"type": st.just("array"), "items": st.just({"type": "string"})},
        optional={"maxItems": st.integers(1, 9)},
    ),
)


def objects(children: Any) -> Any:
    return st.dictionaries(NAMES, children, min_size=1, max_size=4).flatmap(
        lambda props: st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(props)},
            optional={
                "required": st.lists(st.sampled_from(sorted(props)), unique=True, min_size=1)
            },
        )
    )


SCHEMAS = objects(st.recursive(LEAVES, objects, max_leaves=6))
# Names that make the same Python class (a / a_) are refused by the build (TN116), so are not
# drawn together here.
TOOLS = st.lists(
    st.tuples(NAMES, TEXT, SCHEMAS),
    min_size=1,
    max_size=4,
    unique_by=(lambda tool: tool[0], lambda tool: python_names(tool[0]).model),
).map(lambda tools: sorted(tools))


def provider_file(fmt: str, tools: list[tuple[str, str, dict[str, Any]]]) -> Any:
    if fmt == "gemini":
        return [
            {
                "functionDeclarations": [
                    {"name": n, "description": d, "parameters": s} for n, d, s in tools
                ]
            }
        ]
    if fmt == "openai":
        return [
            {"type": "function", "function": {"name": n, "description": d, "parameters": s}}
            for n, d, s in tools
        ]
    if fmt == "openai_responses":
        return [
            {"type": "function", "name": n, "description": d, "parameters": s, "strict": False}
            for n, d, s in tools
        ]
    if fmt == "anthropic":
        return [{"name": n, "description": d, "input_schema": s} for n, d, s in tools]
    if fmt == "mcp":
        return [{"name": n, "description": d, "inputSchema": s} for n, d, s in tools]
    return {
        "tools": [
            {"toolSpec": {"name": n, "description": d, "inputSchema": {"json": s}}}
            for n, d, s in tools
        ]
    }


def round_trip(fmt: str, tools: list[tuple[str, str, dict[str, Any]]], suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        source = root / f"{fmt}.json"
        original = provider_file(fmt, tools)
        source.write_text(json.dumps(original, ensure_ascii=False), "utf-8")
        imported = cli("import", fmt, str(source), "--as", suffix, cwd=root)
        assert imported.exit_code == 0, imported.stderr
        built = cli("build", "specs", "--out", "out", "--target", fmt, cwd=root)
        assert built.exit_code == 0, built.stderr
        rebuilt = json.loads((root / f"out/schemas/{fmt}.json").read_text("utf-8"))
        assert rebuilt == original


EXAMPLES = int(os.environ.get("TNX_IMPORT_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_gemini(tools: Any, suffix: str) -> None:
    round_trip("gemini", tools, suffix)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_openai(tools: Any, suffix: str) -> None:
    round_trip("openai", tools, suffix)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_openai_responses(tools: Any, suffix: str) -> None:
    round_trip("openai_responses", tools, suffix)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_anthropic(tools: Any, suffix: str) -> None:
    round_trip("anthropic", tools, suffix)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_mcp(tools: Any, suffix: str) -> None:
    round_trip("mcp", tools, suffix)


@SETTINGS
@given(tools=TOOLS, suffix=st.sampled_from(["yaml", "json"]))
def test_bedrock(tools: Any, suffix: str) -> None:
    round_trip("bedrock", tools, suffix)
