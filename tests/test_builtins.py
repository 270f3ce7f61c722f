"""Built-in tools and skills at build time: `builtins` and `skills` in [tool.toolnexus-gen]
contribute specs that go into every target's file, pass every provider rule (judged by the
official SDKs' types), get typed models and no handler method; bad settings and bad SKILL.md
files are located errors; the build cache notices every change to them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sdk_check
from conftest import WEATHER, cli, generated, write_specs

from toolnexus_gen.sources.builtins import NAMES

TARGET_FILES = {
    "gemini": "gemini",
    "openai": "openai",
    "openai_responses": "openai_responses",
    "anthropic": "anthropic",
    "mcp": "mcp",
    "bedrock": "bedrock",
}
SKILL = "---\nname: {name}\ndescription: {description}\n---\n{body}"


def project(
    root: Path,
    settings: str,
    specs: dict[str, Any] | None = None,
    skills: dict[str, str] | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        f'[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n{settings}\n'
    )
    write_specs(root / "specs", WEATHER if specs is None else specs)
    for rel, text in (skills or {}).items():
        path = root / "skills" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def build(root: Path, *extra: str) -> Any:
    return cli("build", *extra, cwd=root)


def names_in(root: Path, target: str) -> list[str]:
    data = json.loads((root / f"tools/schemas/{target}.json").read_text())
    if target == "gemini":
        return [d["name"] for d in data[0]["functionDeclarations"]]
    if target == "bedrock":
        return [t["toolSpec"]["name"] for t in data["tools"]]
    if target == "openai":
        return [t["function"]["name"] for t in data]
    return [t["name"] for t in data]


def from_scratch(root: Path) -> dict[str, bytes]:
    """What a build without any cache writes for this project (specs, skills, settings)."""
    copy = root.parent / f"{root.name}_scratch"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir()
    for name in ("specs", "skills"):
        if (root / name).exists():
            shutil.copytree(root / name, copy / name)
    shutil.copy(root / "pyproject.toml", copy / "pyproject.toml")
    result = build(copy)
    assert result.exit_code == 0, result.stderr
    return generated(copy / "tools")


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every built-in and two skills, beside the weather specs."""
    root = project(
        tmp_path_factory.mktemp("full") / "p",
        'builtins = true\nskills = "skills"',
        skills={
            "pdf/SKILL.md": SKILL.format(
                name="pdf", description="Fill PDF forms", body="# PDF\nRun scripts/fill.py.\n"
            ),
            "pdf/scripts/fill.py": "print('filled')\n",
            "pdf/reference.md": "The form fields.\n",
            "notes/SKILL.md": SKILL.format(
                name="notes", description="Take notes", body="Write them down.\n"
            ),
        },
    )
    result = build(root)
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr
    return root


def test_every_builtin_and_the_skill_tool_reach_every_target(full: Path) -> None:
    expected = sorted([*NAMES, "get_weather", "now", "skill"])
    for target in TARGET_FILES:
        assert names_in(full, target) == expected, target
    schemas = {
        target: json.loads((full / f"tools/schemas/{target}.json").read_text())
        for target in TARGET_FILES
    }
    sdk_check.assert_accepted(schemas)  # the official SDKs' own types accept every entry
    anthropic = {tool["name"]: tool for tool in schemas["anthropic"]}
    # the seed's (and opencode's) argument names, kept as they are
    assert set(anthropic["edit"]["input_schema"]["properties"]) == {
        "path",
        "oldString",
        "newString",
        "replaceAll",
    }
    assert anthropic["edit"]["input_schema"]["required"] == ["path", "oldString", "newString"]
    assert set(anthropic["bash"]["input_schema"]["properties"]) == {
        "command",
        "workdir",
        "timeout",
        "description",
    }
    assert anthropic["apply_patch"]["input_schema"]["required"] == ["patchText"]
    question = anthropic["question"]["input_schema"]["properties"]["questions"]["items"]
    assert set(question["properties"]) == {"question", "header", "options", "multiple"}
    todo = anthropic["todowrite"]["input_schema"]["properties"]["todos"]["items"]
    assert todo["required"] == ["id", "text", "completed"]
    assert anthropic["skill"]["input_schema"]["properties"]["name"]["enum"] == ["notes", "pdf"]
    mcp = {tool["name"]: tool for tool in schemas["mcp"]}
    assert mcp["read"]["annotations"] == {"readOnlyHint": True}
    assert mcp["bash"]["annotations"]["destructiveHint"] is True


def test_builtins_need_no_handler_method_and_get_typed_models(full: Path) -> None:
    handlers = (full / "tools/handlers.py").read_text()
    dispatch = (full / "tools/dispatch.py").read_text()
    assert "def get_weather" in handlers and "def bash" not in handlers
    assert 'binding={"builtin": "apply_patch"}' in dispatch
    assert 'binding={"skill": "skills"}' in dispatch
    assert "def skills_prompt() -> str:" in dispatch
    edit = (full / "tools/models/edit.py").read_text()
    assert "oldString: StrictStr" in edit and "replaceAll: StrictBool | None" in edit
    skills = json.loads((full / "tools/schemas/skills.json").read_text())
    assert skills == [
        {
            "name": "notes",
            "description": "Take notes",
            "path": "skills/notes/SKILL.md",
            "body": "Write them down.\n",
            "files": [],
        },
        {
            "name": "pdf",
            "description": "Fill PDF forms",
            "path": "skills/pdf/SKILL.md",
            "body": "# PDF\nRun scripts/fill.py.\n",
            "files": ["reference.md", "scripts/fill.py"],
        },
    ]


def test_the_skills_prompt_is_sorted_and_byte_stable(full: Path) -> None:
    code = "import tools; print(repr(tools.skills_prompt()))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=full,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {
        repr(
            "Skills provide specialized instructions and workflows for specific tasks.\n"
            "Use the skill tool to load a skill when a task matches its description.\n\n"
            "## Available Skills\n- **notes**: Take notes\n- **pdf**: Fill PDF forms"
        )
        + "\n"
    }


def test_builtins_are_off_by_default(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "")
    assert build(root).exit_code == 0
    assert names_in(root, "openai") == ["get_weather", "now"]
    assert "skills_prompt" not in (root / "tools/dispatch.py").read_text()


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('builtins = ["read", "grep"]', ["grep", "read"]),
        ("builtins = false", []),
        (
            "builtins = {tools = {bash = false, webfetch = false}}",
            sorted(set(NAMES) - {"bash", "webfetch"}),
        ),
        (
            "[tool.toolnexus-gen.builtins]\ntools = {question = false}",
            sorted(set(NAMES) - {"question"}),
        ),
    ],
)
def test_a_selection_of_builtins(tmp_path: Path, setting: str, expected: list[str]) -> None:
    root = project(tmp_path / "p", setting, specs={"now.yaml": WEATHER["now.yaml"]})
    result = build(root)
    assert result.exit_code == 0, result.stderr
    assert names_in(root, "bedrock") == sorted([*expected, "now"])


def test_unknown_builtin_names_are_a_located_error_naming_the_known_ones(tmp_path: Path) -> None:
    root = project(tmp_path / "p", '\n\nbuiltins = ["read", "shell", "grepp"]')
    result = build(root)
    assert result.exit_code == 2
    assert (
        "pyproject.toml:6:1: error[TN420]: builtins: unknown built-in tool 'shell' (known: bash, "
        "read, write, edit, grep, glob, webfetch, question, apply_patch, todowrite)"
    ) in result.stderr
    assert "'grepp'" in result.stderr
    assert not (root / "tools").exists()
    table = project(tmp_path / "t", "[tool.toolnexus-gen.builtins]\ntools = {sh = false}")
    result = build(table)
    assert result.exit_code == 2 and "pyproject.toml:4:1: error[TN420]" in result.stderr


@pytest.mark.parametrize(
    "setting",
    [
        "builtins = 3",
        "builtins = {enabled = false}",
        "builtins = {tools = {bash = 0}}",
        "skills = 1",
    ],
)
def test_a_malformed_setting_is_a_located_error(tmp_path: Path, setting: str) -> None:
    root = project(tmp_path / "p", setting)
    result = build(root)
    assert result.exit_code == 2
    assert "pyproject.toml:4:1: error[TN802]" in result.stderr
    assert not (root / "tools").exists()


def test_a_spec_of_the_same_name_replaces_the_builtin(tmp_path: Path) -> None:
    mine = {"description": "My own read", "input_schema": {"type": "object", "properties": {}}}
    root = project(tmp_path / "p", 'builtins = ["read", "write"]', specs={"read.yaml": mine})
    result = build(root)
    assert result.exit_code == 0, result.stderr
    assert (
        "pyproject.toml:4:1: warning[TN421]: built-in tool 'read' is replaced by the spec "
        "specs/read.yaml"
    ) in result.stderr
    assert names_in(root, "openai") == ["read", "write"]
    assert "def read(" in (root / "tools/handlers.py").read_text()  # a handler method now
    anthropic = json.loads((root / "tools/schemas/anthropic.json").read_text())
    assert anthropic[0]["description"] == "My own read"


def test_builtins_follow_the_build_settings(tmp_path: Path) -> None:
    """Contributed specs go through the same pipeline: targets, transforms and their rules."""
    settings = 'builtins = ["edit"]\ntargets = ["openai"]\n[tool.toolnexus-gen.openai]\ntransforms = ["strictify"]'
    root = project(tmp_path / "p", settings, specs={})
    result = build(root)
    assert result.exit_code == 0, result.stderr
    assert "pyproject.toml:4:1: warning[TN221]: openai: sent in strict mode" in result.stderr
    (entry,) = json.loads((root / "tools/schemas/openai.json").read_text())
    assert entry["function"]["strict"] is True
    assert entry["function"]["parameters"]["additionalProperties"] is False


def test_list_shows_the_builtins(tmp_path: Path) -> None:
    root = project(tmp_path / "p", 'builtins = ["glob"]')
    result = cli("list", cwd=root)
    assert result.exit_code == 0 and "glob" in result.output


# -- skills ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("# no front matter\n", "skills/bad/SKILL.md:1:1: error[TN423]", "needs YAML front matter"),
        ("---\nname: bad\n", "skills/bad/SKILL.md:1:1: error[TN423]", "needs YAML front matter"),
        (
            "---\nname: bad\ndescription: [unclosed\n---\nbody\n",
            "skills/bad/SKILL.md:4:1: error[TN423]",
            "malformed front matter",
        ),
        (
            "---\nname: bad\n---\nbody\n",
            "skills/bad/SKILL.md:2:1: error[TN423]",
            "'description' is missing",
        ),
        (
            "---\nname: bad\ndescription: 12\n---\n",
            "skills/bad/SKILL.md:3:14: error[TN423]",
            "'description' must be a non-empty string",
        ),
        (
            "---\nname: Bad Name\ndescription: d\n---\n",
            "skills/bad/SKILL.md:2:7: error[TN424]",
            "lowercase letters",
        ),
        ("- a\n- b\n", "skills/bad/SKILL.md:1:1: error[TN423]", "needs YAML front matter"),
        ("---\n- a\n---\n", "skills/bad/SKILL.md:2:1: error[TN423]", "must be a mapping"),
    ],
)
def test_malformed_front_matter_is_a_located_error(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    root = project(tmp_path / "p", 'skills = "skills"', skills={"bad/SKILL.md": text})
    result = build(root)
    assert result.exit_code == 2, result.stderr
    assert where in result.stderr and message in result.stderr, result.stderr
    assert not (root / "tools").exists()


def test_two_skills_with_one_name_are_an_error_naming_both_files(tmp_path: Path) -> None:
    same = SKILL.format(name="pdf", description="d", body="")
    root = project(
        tmp_path / "p", 'skills = "skills"', skills={"a/SKILL.md": same, "b/SKILL.md": same}
    )
    result = build(root)
    assert result.exit_code == 2
    assert (
        "skills/b/SKILL.md:2:7: error[TN425]: skill name 'pdf' is already taken by "
        "skills/a/SKILL.md"
    ) in result.stderr


def test_a_symlinked_skill_md_never_brings_a_file_from_outside_into_the_package(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "SKILL.md").write_text(SKILL.format(name="leak", description="d", body="TOP SECRET"))
    root = project(tmp_path / "p", 'skills = "skills"')
    (root / "skills/leak").mkdir(parents=True)
    (root / "skills/leak/SKILL.md").symlink_to(secret / "SKILL.md")
    result = build(root)
    assert result.exit_code == 2, result.stderr
    assert (
        "skills/leak/SKILL.md:1:1: error[TN490]: SKILL.md is not read: it is a symbolic link to "
        f"{secret.resolve() / 'SKILL.md'}, outside the skills folder"
    ) in result.stderr
    assert not (root / "tools").exists()
    # also when the link is relative, or goes through a linked folder on the way
    (root / "skills/leak/SKILL.md").unlink()
    (root / "skills/leak/SKILL.md").symlink_to("../../../secret/SKILL.md")
    (root / "skills/via").symlink_to(secret)
    result = build(root)
    assert result.exit_code == 2 and result.stderr.count("error[TN490]") == 1, result.stderr
    assert "skills/via:1:1" not in result.stderr  # a linked folder beside no skill: not walked
    # a link to nothing is no silent skip either
    (root / "skills/leak/SKILL.md").unlink()
    (root / "skills/leak/SKILL.md").symlink_to("missing.md")
    result = build(root)
    assert "skills/leak/SKILL.md:1:1: error[TN490]" in result.stderr
    assert "a symbolic link to nothing" in result.stderr


def test_a_link_inside_the_skills_folder_is_followed(tmp_path: Path) -> None:
    text = SKILL.format(name="pdf", description="Fill PDF forms", body="Run it.\n")
    root = project(tmp_path / "p", 'skills = "skills"', skills={"shared/pdf.md": text})
    (root / "skills/pdf").mkdir()
    (root / "skills/pdf/SKILL.md").symlink_to("../shared/pdf.md")
    result = build(root)
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads((root / "tools/schemas/skills.json").read_text())
    assert entry["name"] == "pdf" and entry["body"] == "Run it.\n"


def test_links_beside_a_skill_out_of_the_folder_are_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    (tmp_path / "home/.ssh").mkdir(parents=True)
    (tmp_path / "home/.ssh/id_rsa").write_text("PRIVATE KEY")
    text = SKILL.format(name="pdf", description="d", body="")
    root = project(
        tmp_path / "p", 'skills = "skills"', skills={"pdf/SKILL.md": text, "pdf/run.py": "x"}
    )
    (root / "skills/pdf/key").symlink_to(tmp_path / "home/.ssh/id_rsa")
    (root / "skills/pdf/home").symlink_to(tmp_path / "home")
    (root / "skills/pdf/gone").symlink_to("nothing")
    (root / "skills/pdf/alias.py").symlink_to("run.py")  # inside: kept
    result = build(root)
    assert result.exit_code == 0, result.stderr
    warnings = sorted(line for line in result.stderr.splitlines() if "TN491" in line)
    assert warnings == [
        "skills/pdf/gone:1:1: warning[TN491]: left out of the files listed with "
        "skills/pdf/SKILL.md: it is a symbolic link to nothing (its target does not exist)",
        "skills/pdf/home:1:1: warning[TN491]: left out of the files listed with "
        f"skills/pdf/SKILL.md: it is a symbolic link to {(tmp_path / 'home').resolve()}, outside "
        "the skills folder",
        "skills/pdf/key:1:1: warning[TN491]: left out of the files listed with "
        f"skills/pdf/SKILL.md: it is a symbolic link to "
        f"{(tmp_path / 'home/.ssh/id_rsa').resolve()}, outside the skills folder",
    ]
    (entry,) = json.loads((root / "tools/schemas/skills.json").read_text())
    assert entry["files"] == ["alias.py", "run.py"]
    package = "".join(p.read_text() for p in (root / "tools").rglob("*") if p.is_file())
    assert "PRIVATE KEY" not in package


def test_an_oversized_skill_md_is_a_located_error(tmp_path: Path) -> None:
    body = "x" * (2 * 1024 * 1024)
    text = SKILL.format(name="big", description="d", body=body)
    root = project(tmp_path / "p", 'skills = "skills"', skills={"big/SKILL.md": text})
    result = build(root)
    assert result.exit_code == 2
    assert (
        "skills/big/SKILL.md:1:1: error[TN423]: SKILL.md is larger than 2097152 bytes"
        in result.stderr
    )
    assert "no SKILL.md under" not in result.stderr  # there is one: it could not be read
    assert "none of the 1 SKILL.md under skills could be read" in result.stderr


def test_a_missing_or_empty_skills_folder(tmp_path: Path) -> None:
    root = project(tmp_path / "p", 'skills = "skills"')
    result = build(root)
    assert result.exit_code == 2
    assert (
        "pyproject.toml:4:1: error[TN422]: skills folder 'skills' does not exist" in result.stderr
    )
    (root / "skills").mkdir()
    result = build(root)
    assert result.exit_code == 0 and "warning[TN426]: no SKILL.md under skills" in result.stderr
    assert json.loads((root / "tools/schemas/skills.json").read_text()) == []
    assert "skill" not in names_in(root, "mcp")


def test_nested_skills_keep_their_own_files(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        'skills = "skills"',
        skills={
            "outer/SKILL.md": SKILL.format(name="outer", description="o", body=""),
            "outer/a.txt": "a",
            "outer/inner/SKILL.md": SKILL.format(name="inner", description="i", body=""),
            "outer/inner/b.txt": "b",
            "outer/node_modules/x.js": "x",
        },
    )
    assert build(root).exit_code == 0
    files = {
        s["name"]: s["files"] for s in json.loads((root / "tools/schemas/skills.json").read_text())
    }
    assert files == {"inner": ["b.txt"], "outer": ["a.txt"]}


# -- the build cache ------------------------------------------------------------------------


def test_check_notices_every_change_to_skills_and_builtins(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        'builtins = ["read"]\nskills = "skills"',
        skills={"pdf/SKILL.md": SKILL.format(name="pdf", description="d", body="v1\n")},
    )
    assert build(root).exit_code == 0
    steps = [
        lambda: (root / "skills/pdf/SKILL.md").write_text(
            SKILL.format(name="pdf", description="d", body="v2\n")
        ),
        lambda: (root / "skills/pdf/extra.md").write_text("more"),
        lambda: (root / "skills/pdf/extra.md").unlink(),
        lambda: (root / "skills/docx/SKILL.md").parent.mkdir(),
        lambda: (root / "skills/docx/SKILL.md").write_text(
            SKILL.format(name="docx", description="Word files", body="")
        ),
        lambda: (root / "pyproject.toml").write_text(
            (root / "pyproject.toml").read_text().replace('["read"]', '["read", "bash"]')
        ),
        lambda: (root / "pyproject.toml").write_text(
            "\n" + (root / "pyproject.toml").read_text()  # the setting moves a line down
        ),
        lambda: write_specs(root / "specs", {"read.yaml": {"description": "mine"}}),
    ]
    for number, step in enumerate(steps):
        step()
        if number not in (3, 6):  # an empty folder, a moved setting: the same files
            check = build(root, "--check")
            assert check.exit_code == 1, f"step {number}: {check.output}{check.stderr}"
        assert build(root).exit_code == 0
        assert generated(root / "tools") == from_scratch(root), f"step {number}"
        assert build(root, "--check").exit_code == 0


def test_an_unchanged_project_is_a_noop_that_keeps_its_warnings(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p", 'builtins = ["read"]', specs={"read.yaml": {"description": "mine"}}
    )
    first = build(root)
    assert first.exit_code == 0 and "warning[TN421]" in first.stderr
    code = (
        "import sys\nfrom toolnexus_gen.cli import main\n"
        "sys.argv = ['toolnexus-gen', 'build']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('PIPELINE' if 'toolnexus_gen.toolspec.validate' in sys.modules else 'FAST')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split()[-1] == "FAST"
    assert "warning[TN421]" in done.stderr


def test_every_builtin_model_is_stable_under_ruff(full: Path) -> None:
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), "format", "--isolated", "--check", "--diff", "tools"],
        cwd=full,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
