"""Generated code passes mypy --strict, ruff check and ruff format --check, and needs only
pydantic; the generator itself passes mypy --strict too."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import ROOT, cli, write_specs
from hypothesis import assume, given, settings
from hypothesis import strategies as st

HOSTILE = {
    "class.yaml": {
        "description": "Keyword name; quotes \"\"\" and ''' and a backslash \\ and {{ x }} {% y %}",
        "input_schema": {
            "type": "object",
            "properties": {
                "from": {"type": "string", "description": "keyword property"},
                "2fa": {"type": "boolean"},
                "a-b": {"type": "integer"},
                "filter[id]": {"type": "string", "enum": ['x"y', "a'b", "\\", '"""; import os']},
            },
        },
        # Anthropic rejects the property key filter[id]; the other providers take it.
        "targets": {"exclude": ["anthropic"]},
    },
    "None.yaml": {"description": '"""; import os; os.system("x"); """'},
    "print.yaml": {
        "description": "builtin\nmultiline\n\n  indented\ttab\x00nul\u2028sep",
        "targets": {"exclude": ["gemini"]},
    },
    # a tool from another source: no handler method, its binding (odd strings too) in TOOLS
    "upstream.yaml": {
        "description": "A tool served by an MCP server",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "source": {"mcp": {"server": 'o"k\\', "tool": "na'me"}},
    },
    # a REST call: its long binding split as ruff format splits it, odd strings escaped
    "rest_call.yaml": {
        "description": "A REST call",
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "q": {"type": "string"}},
            "required": ["id"],
        },
        "http": {
            "method": "POST",
            "url": "https://api.example.test/v1/a/rather/long/path/{id}/with/\"quotes'\\",
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Note": "\"\"\" ''' \\ %"},
            "query": ["q"],
            "timeout": 2.5,
        },
    },
    "user_uses_user_user.yaml": {
        "description": 'Ends with a quote "',
        "input_schema": {
            "type": "object",
            "properties": {
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
                }
            },
            "$defs": {
                "Item": {"type": "object", "properties": {"v": {"type": "number", "default": 1.5}}}
            },
        },
    },
}
# GitHub's: an annotation so long that `name: Type = Field(` overflows the line (black wraps
# the value in parentheses there; ruff format does not)
HOSTILE["code_security_update_configuration.yaml"] = {
    "description": "Update a code security configuration",
    "input_schema": {
        "type": "object",
        "properties": {
            "secret_scanning_delegated_alert_dismissal": {
                "type": "string",
                "enum": ["enabled", "disabled", "not_set"],
                "default": "disabled",
                "description": "The enablement status of secret scanning delegated alert dismissal",
            }
        },
    },
}
PYTHON_FILES_OF = ("weather", "hostile", "agent_tools")


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("quality")
    shutil.copytree(ROOT / "examples/weather/tools", root / "weather")
    # built-in tools and a skill tool (bound tools, skills_prompt)
    shutil.copytree(ROOT / "examples/agent/agent_tools", root / "agent_tools")
    specs = write_specs(root / "hostile_specs", HOSTILE)
    result = cli("build", str(specs), "--out", str(root / "hostile"))
    assert result.exit_code == 0, result.stderr
    return root


def run(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def test_a_value_black_would_wrap_is_laid_out_as_ruff_lays_it_out(packages: Path) -> None:
    model = (packages / "hostile/models/code_security_update_configuration.py").read_text()
    line = "    secret_scanning_delegated_alert_dismissal: SecretScanningDelegatedAlertDismissal = Field(\n"
    assert line in model and " = (\n" not in model


def test_the_layout_never_changes_what_the_code_means() -> None:
    from toolnexus_gen.codegen.models import ruff_layout

    head = "    x_" + "x" * 70 + ": LongName = ("
    wrapped = (
        f"class A:\n{head}\n        f(\n            1,\n{' ' * 12}{'y' * 80},\n        )\n    )\n"
    )
    assert ruff_layout(wrapped) == wrapped.replace(" = (\n", " = f(\n").replace(
        "        f(\n            1,\n" + " " * 12, "        1,\n" + " " * 8
    ).replace("        )\n    )\n", "    )\n")
    # a string running over lines inside the value: dedenting it would change the string
    in_a_string = wrapped.replace("            1,\n", '            """a\n            b""",\n')
    assert ruff_layout(in_a_string) == in_a_string


words = st.text("abcdefghij", min_size=1, max_size=9)


@settings(max_examples=40, deadline=None)
@given(
    name=st.lists(words, min_size=2, max_size=9).map("_".join),
    kind=st.sampled_from(["default", "optional", "list"]),
    description=st.lists(words, min_size=1, max_size=14).map(" ".join),
)
def test_models_are_laid_out_as_ruff_format_lays_them_out(
    name: str, kind: str, description: str
) -> None:
    """Fields (`name: Type = Field(...)`) whose first line does not fit, against ruff itself.
    Not covered: a name and annotation so long that black splits the annotation itself
    (`name: (\n    Type\n) = Field(...)`; ruff keeps a plain one whole) and a value with no
    brackets on an overlong line (ruff puts a plain annotation in parentheses there)."""
    from toolnexus_gen.codegen.models import _source

    enum: dict[str, object] = {"type": "string", "enum": ["on", "off"]}
    prop: dict[str, object] = {
        "default": {**enum, "default": "off"},
        "optional": dict(enum),
        "list": {"type": "array", "items": enum},
    }[kind]
    prop["description"] = description
    source = _source({"type": "object", "properties": {name: prop}}, "Args", "# h").rstrip() + "\n"
    assume(": (\n" not in source)
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    done = subprocess.run(
        [ruff, "format", "--isolated", "-"], input=source, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert source == done.stdout


def test_mypy_strict(packages: Path) -> None:
    result = run(sys.executable, "-m", "mypy", "--strict", *PYTHON_FILES_OF, cwd=packages)
    assert result.returncode == 0, result.stdout


def test_the_generator_itself_passes_mypy_strict() -> None:
    result = run(sys.executable, "-m", "mypy", "--strict", "toolnexus_gen", cwd=ROOT)
    assert result.returncode == 0, result.stdout


def test_ruff_check_and_format(packages: Path) -> None:
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    check = run(
        ruff,
        "check",
        "--isolated",
        "--extend-select",
        "E,W,F,I,UP,B",
        "--ignore",
        "E501",
        *PYTHON_FILES_OF,
        cwd=packages,
    )
    assert check.returncode == 0, check.stdout
    fmt = run(ruff, "format", "--isolated", "--check", "--diff", *PYTHON_FILES_OF, cwd=packages)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


@pytest.mark.parametrize(
    "rules",
    [
        [],
        ["--select", "E4,E7,E9,F,RUF100"],
        ["--select", "E,W,F,I,UP,B,RUF100", "--ignore", "E501"],
    ],
    ids=["ruff-defaults", "defaults-and-unused-noqa", "house-rules-and-unused-noqa"],
)
def test_ruff_passes_without_suppressions_it_does_not_need(
    packages: Path, rules: list[str]
) -> None:
    """Whatever rules ruff enables by default (they change between releases), generated code
    passes them, and carries no `noqa` that a rule set leaves unused."""
    ruff = str(Path(sysconfig.get_path("scripts")) / "ruff")
    check = run(ruff, "check", "--isolated", *rules, *PYTHON_FILES_OF, cwd=packages)
    assert check.returncode == 0, check.stdout + check.stderr
    for path in (packages / "hostile").rglob("*.py"):
        assert "noqa" not in path.read_text(), path


def test_hostile_strings_cannot_inject_and_round_trip(packages: Path) -> None:
    script = (
        "import json, hostile, hostile.handlers as h\n"
        "doc = {t['name']: t['description'] for t in hostile.tool_definitions()}\n"
        "b = hostile.TOOLS['upstream'].binding\n"
        "print(json.dumps([doc, h.ToolHandlers.class_.__doc__, sorted(hostile.TOOLS), b]))\n"
    )
    result = run(sys.executable, "-c", script, cwd=packages)
    assert result.returncode == 0, result.stderr
    import json

    descriptions, class_doc, names, binding = json.loads(result.stdout)
    assert descriptions == {
        name.removesuffix(".yaml"): spec["description"] for name, spec in HOSTILE.items()
    }
    assert class_doc == HOSTILE["class.yaml"]["description"]
    assert names == [
        "None",
        "class",
        "code_security_update_configuration",
        "print",
        "rest_call",
        "upstream",
        "user_uses_user_user",
    ]
    assert binding == HOSTILE["upstream.yaml"]["source"]


RUNTIME_ONLY_SCRIPT = """
import asyncio, json, sys
import weather
import toolnexus_runtime.integrations  # every framework adapter, none of the frameworks
assert "toolnexus_gen" not in sys.modules and "jinja2" not in sys.modules
class H(weather.ToolHandlers):
    async def get_weather(self, args, ctx): return f"{args.city}: 21C, clear"
    def now(self, args, ctx): return "12:00"
tk = weather.Toolkit(H())
print(asyncio.run(tk.execute("get_weather", {"city": "Chennai"}, weather.ToolContext())).output)
call = {"id": "c1", "type": "function", "function": {"name": "now", "arguments": "{}"}}
print(tk.openai_tool_messages({"role": "assistant", "tool_calls": [call]})[0]["content"])
class Completions:  # a scripted client in the shape openai.OpenAI has: one tool call, then text
    turns = [
        {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function",
             "function": {"name": "get_weather", "arguments": json.dumps({"city": "Oslo"})}}]}}]},
        {"choices": [{"message": {"role": "assistant", "content": "Oslo is clear."}}]},
    ]
    def create(self, **request):
        assert request["tools"] == weather.to_openai()
        return self.turns.pop(0)
class Client:
    class chat:
        completions = Completions()
run = tk.run_openai(Client(), model="m", messages="Weather in Oslo?")
print(run.turns, run.messages[2]["content"])
try:
    import toolnexus_gen
except ImportError:
    print("isolated")
third_party = sorted({m.split(".")[0] for m in sys.modules if not m.startswith("_")} - set(sys.stdlib_module_names))
print(" ".join(third_party))
"""


def test_generated_package_runs_with_only_the_runtime_installed(
    packages: Path, tmp_path: Path
) -> None:
    """A fresh venv with only `pip install ./runtime` (and so pydantic, and regex for the built-in
    grep): execute, a round trip and a tool loop of a generated package, with no generator,
    jinja2, click or SDK in sight."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = run(
        str(python), "-m", "pip", "install", "--quiet", str(ROOT / "runtime"), cwd=tmp_path
    )
    assert install.returncode == 0, install.stderr
    listed = run(str(python), "-m", "pip", "list", "--format=freeze", cwd=tmp_path).stdout
    names = {line.split("==")[0].lower().replace("_", "-") for line in listed.split()}
    required = {
        "toolnexus-runtime",
        "pydantic",
        "pydantic-core",
        "annotated-types",
        "typing-extensions",
        "typing-inspection",
        "anyio",
        "idna",  # anyio's
        "packaging",
    }
    # what anyio needs differs a little by its release and the Python version
    assert (
        required
        <= names - {"pip", "setuptools", "wheel"}
        <= required
        | {
            "sniffio",
            "exceptiongroup",
        }
    )
    result = run(str(python), "-c", RUNTIME_ONLY_SCRIPT, cwd=packages)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:4] == ["Chennai: 21C, clear", "12:00", "2 Oslo: 21C, clear", "isolated"]
    assert set(lines[4].split()) <= {
        "anyio",  # the sync round trip ran its handler in a worker thread
        "exceptiongroup",
        "idna",
        "packaging",
        "sniffio",
        "annotated_types",
        "pydantic",
        "pydantic_core",
        "toolnexus_runtime",
        "typing_extensions",
        "typing_inspection",
        "weather",
    }


def test_mypy_flags_a_handler_class_that_misses_a_tool(packages: Path) -> None:
    (packages / "user_app.py").write_text(
        "from weather import GetWeatherArgs, ToolContext, ToolHandlers, Toolkit\n\n\n"
        "class Partial(ToolHandlers):\n"
        "    async def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> str:\n"
        "        return args.city\n\n\n"
        "tk = Toolkit(Partial())\n"
    )
    result = run(sys.executable, "-m", "mypy", "--strict", "user_app.py", cwd=packages)
    assert result.returncode == 1
    assert (
        'Cannot instantiate abstract class "Partial" with abstract attribute "now"' in result.stdout
    )
