"""A coding agent built from the built-in tools: it fixes a bug in a scratch workspace.

The package agent_tools/ is generated from pyproject.toml (`builtins`, `skills`) and one spec
of our own (specs/run_tests.yaml). The model's turns are scripted and played through the
official Anthropic client (../scripted.py), so this runs offline; with ANTHROPIC_API_KEY set
the same loop talks to the real API (model: $ANTHROPIC_MODEL, default claude-sonnet-4-5).

Everything the tools touch is inside the scratch workspace: the scripted model also tries to
read a file beside it, and gets an error result instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # agent_tools; ../scripted.py

from agent_tools import ToolContext, ToolError, ToolHandlers, Toolkit, skills_prompt  # noqa: E402
from agent_tools.models import RunTestsArgs  # noqa: E402

PROJECT = {
    "greet.py": 'def greet(name):\n    return "Hello, " + nme + "!"\n',
    "test_greet.py": (
        "from greet import greet\n\n"
        'assert greet("Ada") == "Hello, Ada!", greet("Ada")\n'
        'print("test_greet: ok")\n'
    ),
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n\n## 1.0.0\n\n- First release.\n",
}
PROMPT = "The tests fail. Find out why, fix it, and record the fix in the changelog."
SYSTEM = "You are a careful coding agent working in a small Python project.\n\n" + skills_prompt()
TODOS = ["Run the tests", "Fix greet.py", "Record the fix in CHANGELOG.md"]


def todos(done: int) -> dict[str, Any]:
    return {
        "todos": [
            {"id": str(i), "text": text, "completed": i <= done}
            for i, text in enumerate(TODOS, 1)
        ]
    }


TURNS: list[Any] = [
    [("t1", "todowrite", todos(0)), ("t2", "run_tests", {})],
    [("t3", "grep", {"pattern": r"def greet"}), ("t4", "read", {"path": "greet.py"})],
    [
        ("t5", "edit", {"path": "greet.py", "oldString": "+ nme +", "newString": "+ name +"}),
        ("t6", "read", {"path": "../secret.txt"}),  # refused: outside the workspace
    ],
    [
        (
            "t7",
            "bash",
            {
                "command": f"{shlex.quote(sys.executable)} test_greet.py",
                "description": "run the test again",
                "timeout": 20000,
            },
        ),
        ("t8", "skill", {"name": "release-notes"}),
    ],
    [
        (
            "t9",
            "apply_patch",
            {
                "patchText": "*** Begin Patch\n*** Update File: CHANGELOG.md\n@@ ## Unreleased\n"
                "+\n+- Fixed the greeting, which failed with a NameError (greet.py).\n"
                "*** End Patch"
            },
        ),
        ("t10", "todowrite", todos(3)),
    ],
    "Fixed: greet.py used an undefined name (nme); the test passes and CHANGELOG.md says so.",
]


class AgentTools(ToolHandlers):
    """Our one tool; the built-ins and the skill tool need no method."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def run_tests(self, args: RunTestsArgs, ctx: ToolContext) -> str:
        tests = sorted(self.workspace.glob("test_*.py"))
        failed = []
        for test in tests:
            if args.pattern and args.pattern not in test.name:
                continue
            done = subprocess.run(
                [sys.executable, test.name],
                cwd=self.workspace,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            if done.returncode != 0:
                failed.append(f"{test.name} failed:\n{done.stderr.strip().splitlines()[-1]}")
        if failed:
            raise ToolError("\n".join(failed))
        return f"{len(tests)} test file(s) passed"


def main() -> None:
    import anthropic
    import scripted

    scratch = Path(tempfile.mkdtemp(prefix="agent-"))
    workspace = scratch / "project"
    workspace.mkdir()
    for name, text in PROJECT.items():
        (workspace / name).write_text(text)
    (scratch / "secret.txt").write_text("not for the model\n")

    if os.environ.get("ANTHROPIC_API_KEY"):
        client = anthropic.Anthropic()
        model = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5")
    else:
        (client, _), model = scripted.client_for("anthropic", TURNS), "scripted"
    with Toolkit(AgentTools(workspace), workspace=workspace, output_limit=10_000) as tk:
        run = tk.run_anthropic(
            client,
            model=model,
            max_tokens=2048,
            system=SYSTEM,
            messages=[{"role": "user", "content": PROMPT}],
            max_turns=12,
        )
    for call, result in run.tool_calls:
        first = result.output.splitlines()[0] if result.output else ""
        print(f"{'error' if result.is_error else 'ok':5} {call.name:11} {first[:90]}")
    print(run.response.content[-1].text)
    if model == "scripted":  # the scripted run ends where the script says
        assert (workspace / "greet.py").read_text() == PROJECT["greet.py"].replace("nme", "name")
        assert "- Fixed the greeting" in (workspace / "CHANGELOG.md").read_text()
        assert (scratch / "secret.txt").read_text() == "not for the model\n"
        refused = [r for c, r in run.tool_calls if c.name == "read" and r.is_error]
        assert len(refused) == 1 and "outside the workspace" in refused[0].output
        print("agent demo: ok (workspace", workspace, "left for you to look at)")


if __name__ == "__main__":
    main()
