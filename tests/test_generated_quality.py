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
PYTHON_FILES_OF = ("weather", "hostile")


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("quality")
    shutil.copytree(ROOT / "examples/weather/tools", root / "weather")
    specs = write_specs(root / "hostile_specs", HOSTILE)
    result = cli("build", str(specs), "--out", str(root / "hostile"))
    assert result.exit_code == 0, result.stderr
    return root


def run(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def test_mypy_strict(packages: Path) -> None:
    result = run(
        sys.executable, "-m", "mypy", "--strict", "--no-incremental", *PYTHON_FILES_OF, cwd=packages
    )
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


def test_hostile_strings_cannot_inject_and_round_trip(packages: Path) -> None:
    script = (
        "import json, hostile, hostile.handlers as h\n"
        "doc = {t['name']: t['description'] for t in hostile.tool_definitions()}\n"
        "print(json.dumps([doc, h.ToolHandlers.class_.__doc__, sorted(hostile.TOOLS)]))\n"
    )
    result = run(sys.executable, "-c", script, cwd=packages)
    assert result.returncode == 0, result.stderr
    import json

    descriptions, class_doc, names = json.loads(result.stdout)
    assert descriptions == {
        name.removesuffix(".yaml"): spec["description"] for name, spec in HOSTILE.items()
    }
    assert class_doc == HOSTILE["class.yaml"]["description"]
    assert names == ["None", "class", "print", "user_uses_user_user"]


def test_generated_package_runs_with_only_pydantic(packages: Path, tmp_path: Path) -> None:
    """No toolnexus_gen, jinja2, click...: only the standard library and pydantic's own packages."""
    site = Path(sysconfig.get_path("purelib"))
    only = tmp_path / "only_pydantic"
    only.mkdir()
    for name in (
        "pydantic",
        "pydantic_core",
        "typing_extensions.py",
        "annotated_types",
        "typing_inspection",
    ):
        if (site / name).exists():
            (only / name).symlink_to(site / name)
    script = (
        "import sys, asyncio\n"
        "import weather\n"
        "assert 'toolnexus_gen' not in sys.modules and 'jinja2' not in sys.modules\n"
        "class H(weather.ToolHandlers):\n"
        "    async def get_weather(self, args, ctx): return f'{args.city}: 21C, clear'\n"
        "    def now(self, args, ctx): return '12:00'\n"
        "tk = weather.Toolkit(H())\n"
        "r = asyncio.run(tk.execute('get_weather', {'city': 'Chennai'}, weather.ToolContext()))\n"
        "print(r.output)\n"
        "try:\n    import toolnexus_gen\nexcept ImportError:\n    print('isolated')\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            f"import sys; sys.path[:0] = [{str(only)!r}, {str(packages)!r}]\n" + script,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Chennai:", "21C,", "clear", "isolated"]


def test_mypy_flags_a_handler_class_that_misses_a_tool(packages: Path) -> None:
    (packages / "user_app.py").write_text(
        "from weather import GetWeatherArgs, ToolContext, ToolHandlers, Toolkit\n\n\n"
        "class Partial(ToolHandlers):\n"
        "    async def get_weather(self, args: GetWeatherArgs, ctx: ToolContext) -> str:\n"
        "        return args.city\n\n\n"
        "tk = Toolkit(Partial())\n"
    )
    result = run(
        sys.executable, "-m", "mypy", "--strict", "--no-incremental", "user_app.py", cwd=packages
    )
    assert result.returncode == 1
    assert (
        'Cannot instantiate abstract class "Partial" with abstract attribute "now"' in result.stdout
    )
