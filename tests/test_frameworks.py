"""Google ADK, CrewAI, LlamaIndex, smolagents, Strands Agents and AutoGen, each in the venv of
its own that `make frameworks` makes (their pins clash with this venv's: see the frameworks
guide): this builds the `kit` and `aliased` packages once, then runs
tests/frameworks/check_<framework>.py with that venv's python. Each module drives its
framework's own loop (a scripted model) and asserts what the handler got and what the model got
back. And the guide's table of what each framework carries says what those tests assert."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, write_specs

FRAMEWORKS = ["google_adk", "crewai", "llama_index", "smolagents", "strands", "autogen"]
VENVS = ROOT / ".venvs"
# No cache, config or conftest of the main suite (the framework venv has pytest alone); the
# fixtures come from tests/frameworks/frameworks_common.py, loaded as a plugin.
QUIET = ["-q", "-p", "no:cacheprovider", "-p", "no:warnings", "-c", os.devnull]
QUIET += ["-p", "frameworks_common"]

KIT_SPECS: dict[str, Any] = {
    "book.yaml": {
        "description": "Book a room",
        "strict": True,
        "groups": ["write"],
        "examples": [{"room": "a", "note": None}],
        "input_schema": {
            "type": "object",
            "properties": {
                "room": {"type": "string", "enum": ["a", "b"], "description": "Room name"},
                "note": {"type": ["string", "null"], "description": "Optional note"},
            },
            "required": ["room", "note"],
            "additionalProperties": False,
        },
    },
    "chart.yaml": {
        "description": "Chart a month's sales",
        "groups": ["read"],
        "input_schema": {
            "type": "object",
            "properties": {"month": {"type": "string", "description": "Month name"}},
            "required": ["month"],
        },
    },
    "stats.yaml": {
        "description": "Sales statistics of a year",
        "groups": ["read"],
        "input_schema": {
            "type": "object",
            "properties": {"year": {"type": "integer", "description": "The year"}},
            "required": ["year"],
        },
        "output_schema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "mean": {"type": "number"}},
            "required": ["count", "mean"],
        },
    },
}

# Names a provider rejects: aliased in its file (name_aliases), mapped back for the handler.
ALIASED_SPECS: dict[str, Any] = {
    "github.create_issue.json": {
        "description": "Create an issue",
        "input_schema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "$meta": {"type": "string"}},
            "required": ["title", "$meta"],
        },
    },
}

PYPROJECT = """
[tool.toolnexus-gen.gemini]
transforms = ["nullable", "describe"]

[tool.toolnexus-gen.toolsets]
read = {groups = ["read"]}
"""


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("frameworks")
    (folder / "pyproject.toml").write_text(PYPROJECT)
    specs = write_specs(folder / "specs", KIT_SPECS)
    result = cli("build", str(specs), "--out", str(folder / "kit"), cwd=folder)
    assert result.exit_code == 0, result.output
    aliased = folder / "aliased_project"
    aliased.mkdir()
    (aliased / "pyproject.toml").write_text("[tool.toolnexus-gen]\nname_aliases = true\n")
    specs = write_specs(aliased / "specs", ALIASED_SPECS)
    result = cli("build", str(specs), "--out", str(folder / "aliased"), cwd=aliased)
    assert result.exit_code == 0, result.output
    return folder


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_in_its_own_venv(framework: str, packages: Path) -> None:
    python = VENVS / framework / "bin" / "python"
    assert python.exists(), f"no {python}: `make frameworks` makes the framework venvs"
    module = ROOT / "tests" / "frameworks" / f"check_{framework}.py"
    folder = module.parent
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            *QUIET,
            f"--rootdir={folder}",
            f"--confcutdir={folder}",
            str(module),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        env={
            **os.environ,
            "TNX_FRAMEWORK_PACKAGES": str(packages),
            "PYTHONPATH": str(folder),
        },
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    # every test of the module ran and passed, none skipped
    tests = module.read_text("utf-8").count("\ndef test_")
    assert re.search(rf"^{tests} passed in [\d.]+s", done.stdout, re.MULTILINE), done.stdout[-3000:]


# -- the guide's table: every cell is what a named test asserts --------------------------------

MAIN = "tests/test_integrations.py"
ADK, CREW, LLAMA, SMOL, STRANDS, AUTOGEN = (
    f"tests/frameworks/check_{name}.py" for name in FRAMEWORKS
)
LOOP = "test_a_bad_call_is_corrected_in_the_loop"
CARRY = "test_examples_are_not_carried_and_cancelling_the_call_cancels_the_handler"
# framework row -> (cell, the test that asserts it) per column after the first
TABLE: dict[str, list[tuple[str, str]]] = {
    "pydantic-ai": [
        ("the OpenAI definition", f"{MAIN}::test_pydantic_ai_function_model"),
        ("yes", f"{MAIN}::test_pydantic_ai_keeps_strict_and_non_strict_tools_as_checked_in"),
        ("no", f"{MAIN}::test_pydantic_ai_examples_images_and_cancellation"),
        ("as text", f"{MAIN}::test_pydantic_ai_examples_images_and_cancellation"),
        ("yes", f"{MAIN}::test_pydantic_ai_function_model"),
        ("yes", f"{MAIN}::test_pydantic_ai_examples_images_and_cancellation"),
        ("a retry prompt (`ModelRetry`)", f"{MAIN}::test_pydantic_ai_function_model"),
    ],
    "OpenAI Agents SDK": [
        ("the OpenAI definition", f"{MAIN}::test_openai_agents_scripted_model"),
        (
            "yes",
            f"{MAIN}::test_openai_agents_keeps_strict_and_non_strict_tools_exactly_as_checked_in",
        ),
        ("no", f"{MAIN}::test_openai_agents_examples_images_and_cancellation"),
        ("as text", f"{MAIN}::test_openai_agents_examples_images_and_cancellation"),
        ("yes", f"{MAIN}::test_openai_agents_scripted_model"),
        ("yes", f"{MAIN}::test_openai_agents_examples_images_and_cancellation"),
        ("the error text as tool output", f"{MAIN}::test_openai_agents_scripted_model"),
    ],
    "LangChain / LangGraph": [
        (
            "the OpenAI definition (`langchain_tool_schemas`)",
            f"{MAIN}::test_langchain_tools_carry_strict_as_checked_in",
        ),
        ("yes", f"{MAIN}::test_langchain_tools_carry_strict_as_checked_in"),
        ("no", f"{MAIN}::test_langchain_examples_images_and_cancellation"),
        ("as text", f"{MAIN}::test_langchain_examples_images_and_cancellation"),
        ("yes", f"{MAIN}::test_langgraph_tool_node_in_a_graph"),
        ("yes", f"{MAIN}::test_langchain_examples_images_and_cancellation"),
        ('`ToolMessage(status="error")`', f"{MAIN}::test_langgraph_tool_node_in_a_graph"),
    ],
    "Google ADK": [
        ("the Gemini declarations", f"{ADK}::{LOOP}"),
        ("no such flag", f"{ADK}::test_a_toolset_filter_and_prefix_per_agent"),
        ("no", f"{ADK}::test_examples_are_not_carried_and_cancelling_the_run_cancels_the_call"),
        ("yes", f"{ADK}::test_images_structured_output_state_and_a_toolset"),
        ("yes", f"{ADK}::{LOOP}"),
        ("yes", f"{ADK}::test_examples_are_not_carried_and_cancelling_the_run_cancels_the_call"),
        ('`{"error": ...}` function response', f"{ADK}::{LOOP}"),
    ],
    "CrewAI": [
        ("built by CrewAI from the generated model", f"{CREW}::{LOOP}"),
        ("always (CrewAI's)", f"{CREW}::{LOOP}"),
        ("no", f"{CREW}::{CARRY}"),
        ("as text", f"{CREW}::test_enums_nullable_structured_output_images_and_a_toolset"),
        ("no", f"{CREW}::{LOOP}"),
        ("async calls (`arun`)", f"{CREW}::{CARRY}"),
        ("`ToolFailure` (reason `invalid_input`)", f"{CREW}::{LOOP}"),
    ],
    "LlamaIndex": [
        ("the OpenAI definition; `fn_schema` the generated model", f"{LLAMA}::{LOOP}"),
        ("no", f"{LLAMA}::{LOOP}"),
        ("no", f"{LLAMA}::{CARRY}"),
        ("yes", f"{LLAMA}::test_images_structured_output_and_a_toolset"),
        ("no", f"{LLAMA}::{LOOP}"),
        ("yes", f"{LLAMA}::{CARRY}"),
        ("`ToolOutput(is_error=True)`", f"{LLAMA}::test_sync_calls_enums_and_nullable"),
    ],
    "smolagents": [
        ("`inputs` from the OpenAI definition", f"{SMOL}::{LOOP}"),
        ("no", f"{SMOL}::{LOOP}"),
        ("no", f"{SMOL}::test_examples_are_not_carried"),
        ("as text", f"{SMOL}::test_enums_nullable_toolkit_errors_structured_output_and_a_toolset"),
        ("no", f"{SMOL}::{LOOP}"),
        ("no", f"{SMOL}::test_tools_run_synchronously_to_the_end"),
        (
            "the step's error (`ToolError`)",
            f"{SMOL}::test_enums_nullable_toolkit_errors_structured_output_and_a_toolset",
        ),
    ],
    "Strands Agents": [
        ("the Bedrock `toolSpec` (normalised by Strands)", f"{STRANDS}::{LOOP}"),
        ("no such flag", f"{STRANDS}::test_enums_and_nullable_as_checked_in"),
        ("no", f"{STRANDS}::{CARRY}"),
        ("yes", f"{STRANDS}::test_images_structured_output_invocation_state_and_a_toolset"),
        ("yes", f"{STRANDS}::{LOOP}"),
        ("yes", f"{STRANDS}::{CARRY}"),
        ('`ToolResult(status="error")`', f"{STRANDS}::{LOOP}"),
    ],
    "AutoGen": [
        ("the OpenAI definition", f"{AUTOGEN}::{LOOP}"),
        ("yes", f"{AUTOGEN}::test_strict_structured_output_and_a_toolset"),
        ("no", f"{AUTOGEN}::test_examples_are_not_carried"),
        ("as text", f"{AUTOGEN}::test_strict_structured_output_and_a_toolset"),
        ("yes", f"{AUTOGEN}::{LOOP}"),
        ("yes", f"{AUTOGEN}::test_cancelling_the_token_cancels_the_call"),
        ("`FunctionExecutionResult(is_error=True)`", f"{AUTOGEN}::{LOOP}"),
    ],
}


def guide_table() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "guides" / "frameworks.md").read_text("utf-8")
    lines = text.split("<!-- frameworks-table:", 1)[1].splitlines()[1:]
    rows = [line for line in lines[2:] if line.startswith("|")][: len(TABLE) + 1]
    cells = [[c.strip() for c in row.strip().strip("|").split(" | ")] for row in rows]
    assert [c[0] for c in cells] == list(TABLE)  # a row per framework, nothing after the table
    return {c[0]: c[1:] for c in cells}


def test_the_guide_table_says_what_the_tests_assert() -> None:
    assert guide_table() == {row: [cell for cell, _ in cells] for row, cells in TABLE.items()}
    for row, cells in TABLE.items():
        for cell, test in cells:
            path, name = test.split("::")
            defined = {
                node.name
                for node in ast.parse((ROOT / path).read_text("utf-8")).body
                if isinstance(node, ast.FunctionDef)
            }
            assert name in defined, f"{row} / {cell}: no {test}"
