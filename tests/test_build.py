"""Writing, --check, stale files, ownership, determinism and configuration."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, WEATHER, cli, cli_process, snapshot, write_specs

from toolnexus_gen.fs.output import MANIFEST, _manifest_text


def test_build_then_check_is_fresh_and_unchanged_files_keep_mtime(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    assert cli("build", str(specs), "--out", str(tmp_path / "tools")).exit_code == 0
    first = snapshot(tmp_path / "tools")
    again = cli("build", str(specs), "--out", str(tmp_path / "tools"))
    assert again.exit_code == 0 and "0 files written" in again.stdout
    assert snapshot(tmp_path / "tools") == first  # same bytes, same modification times
    check = cli("build", str(specs), "--out", str(tmp_path / "tools"), "--check")
    assert check.exit_code == 0 and "up to date" in check.stdout


def test_check_reports_changed_missing_and_stale_with_a_diff(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", {**WEATHER, "ping.yaml": {"description": "Ping"}})
    out = tmp_path / "tools"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    (specs / "ping.yaml").unlink()
    write_specs(
        specs,
        {
            "get_weather.yaml": {**WEATHER["get_weather.yaml"], "description": "Weather now"},
            "pong.yaml": {"description": "Pong"},
        },
    )
    before = snapshot(out)
    result = cli("build", str(specs), "--out", str(out), "--check")
    assert result.exit_code == 1
    assert f"changed: {out.as_posix()}/schemas/gemini.json" in result.stderr
    assert f"missing: {out.as_posix()}/models/pong.py" in result.stderr
    assert f"stale: {out.as_posix()}/models/ping.py" in result.stderr
    assert '-        "description": "Current weather for a city",' in result.stderr
    assert '+        "description": "Weather now",' in result.stderr
    assert snapshot(out) == before  # --check writes nothing
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    assert not (out / "models/ping.py").exists() and (out / "models/pong.py").exists()
    assert cli("build", str(specs), "--out", str(out), "--check").exit_code == 0


def test_foreign_files_are_never_overwritten_or_deleted(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "tools"
    out.mkdir()
    (out / "mine.py").write_text("# my code\n")
    result = cli("build", str(specs), "--out", str(out))
    assert (
        result.exit_code == 2 and "did not generate" in result.stderr and "mine.py" in result.stderr
    )
    assert sorted(p.name for p in out.iterdir()) == ["mine.py"]
    (out / "mine.py").unlink()
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    (out / "models" / "notes.txt").write_text("keep me")
    assert cli("build", str(specs), "--out", str(out)).exit_code == 2
    assert (out / "models" / "notes.txt").read_text() == "keep me"


def test_pycache_does_not_count_as_a_foreign_file(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "tools"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-c", "import tools.dispatch"], cwd=tmp_path, check=True, env=env
    )
    assert (out / "__pycache__").is_dir()
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0


def _tree_hash(folder: Path) -> str:
    """The generated files (the build cache and lock, which hold times, are not output)."""
    digest = hashlib.sha256()
    for name, (data, _mtime) in snapshot(folder).items():
        if name.startswith(".toolnexus-gen.cache/") or name == ".toolnexus-gen.lock":
            continue
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def test_output_is_byte_identical_across_cwd_hash_seed_and_discovery_order(tmp_path: Path) -> None:
    many = {
        **WEATHER,
        **{
            f"nested/t{i}.yaml": {
                "description": f"Tool {i}",
                "input_schema": {
                    "type": "object",
                    "properties": {"z": {"type": "string"}, "a": {"type": "integer"}},
                },
            }
            for i in range(12)
        },
    }
    hashes = set()
    for n, (seed, cwd_name) in enumerate([("0", "."), ("1", "specs"), ("12345", "..")]):
        project = tmp_path / f"p{n}"
        write_specs(project / "specs", dict(reversed(list(many.items()))) if n % 2 else many)
        (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        cwd = (project / cwd_name).resolve()
        result = cli_process(
            "build",
            str((project / "specs").resolve()),
            "--out",
            str((project / "tools").resolve()),
            cwd=cwd,
            env={"PYTHONHASHSEED": seed},
        )
        assert result.returncode == 0, result.stderr
        hashes.add(_tree_hash(project / "tools"))
        text = (project / "tools/dispatch.py").read_text()
        assert str(tmp_path) not in text and "toolnexus-gen build specs --out tools" in text
    assert len(hashes) == 1


def test_json_files_format(tmp_path: Path) -> None:
    specs = write_specs(
        tmp_path / "specs",
        {
            "t.yaml": {
                "description": "Ünïcode — ok",
                "input_schema": {
                    "type": "object",
                    "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
                },
            }
        },
    )
    assert cli("build", str(specs), "--out", str(tmp_path / "out")).exit_code == 0
    text = (tmp_path / "out/schemas/anthropic.json").read_text("utf-8")
    assert text.endswith("}\n]\n") and '\n  {\n    "name": "t",' in text
    assert "Ünïcode — ok" in text  # UTF-8, not \u escapes
    assert text.index('"b"') < text.index('"a"')  # author's key order kept


def test_python_files_have_do_not_edit_header(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    assert cli("build", str(specs), "--out", str(tmp_path / "tools")).exit_code == 0
    for path in (tmp_path / "tools").rglob("*.py"):
        first = path.read_text().splitlines()[:2]
        assert first[0].startswith("# DO NOT EDIT: generated by toolnexus-gen"), path
        assert "toolnexus-gen build" in first[1]


def test_pyproject_config_supplies_defaults_and_flags_override(tmp_path: Path) -> None:
    write_specs(tmp_path / "tool_specs", WEATHER)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nspecs = "tool_specs"\nout = "src/app/tools"\ntargets = ["gemini", "openai"]\n'
        '\n[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n'
    )
    (tmp_path / "sub").mkdir()
    result = cli("build", cwd=tmp_path / "sub")
    assert result.exit_code == 0, result.stderr
    schemas = tmp_path / "src/app/tools/schemas"
    assert sorted(p.name for p in schemas.iterdir()) == ["gemini.json", "openai.json", "tools.json"]
    assert '"parametersJsonSchema"' in (schemas / "gemini.json").read_text()
    result = cli("build", "--target", "mcp", "--out", "other", cwd=tmp_path)
    assert result.exit_code == 0 and (tmp_path / "other/schemas/mcp.json").exists()


def test_bad_config_is_a_located_error(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", WEATHER)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.toolnexus-gen]\nspecs = "specs"\n'
        'outt = "tools"\ntargets = ["gemini", "palm"]\n'
    )
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    assert "pyproject.toml:6:1: error[TN802]: unknown key 'outt'" in result.stderr
    assert "pyproject.toml:7:1: error[TN802]: unknown target 'palm'" in result.stderr
    assert not (tmp_path / "tools").exists()


def test_usage_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    result = cli_process("build", "nowhere", cwd=tmp_path)
    assert (
        result.returncode == 2
        and "does not exist" in result.stderr
        and "Traceback" not in result.stderr
    )
    write_specs(tmp_path / "specs", WEATHER)
    result = cli_process("build", "specs", "--target", "palm", cwd=tmp_path)
    assert result.returncode == 2 and "unknown target" in result.stderr


def test_explain_and_version(tmp_path: Path) -> None:
    result = cli("explain", "tn113")
    assert result.exit_code == 0 and "TN113" in result.stdout and "type: object" in result.stdout
    assert cli("explain", "TN999").exit_code == 2
    assert cli("--version").stdout.startswith("toolnexus-gen, version")


def test_default_out_is_tools_beside_specs(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", WEATHER)
    assert cli("build", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "tools" / MANIFEST).is_file()


def test_wheel_install_builds_from_another_directory(tmp_path: Path) -> None:
    """A non-editable install (templates shipped in the wheel) works from an unrelated folder."""
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
    )
    target = tmp_path / "site"
    wheel = next(dist.glob("*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    assert (target / "toolnexus_gen/templates/python/dispatch.py.jinja").is_file()
    write_specs(tmp_path / "elsewhere/specs", WEATHER)
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [sys.executable, "-c", "import toolnexus_gen, sys; print(toolnexus_gen.__file__)"],
        cwd=tmp_path / "elsewhere",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith(str(target))
    subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs"],
        cwd=tmp_path / "elsewhere",
        env=env,
        check=True,
        capture_output=True,
    )
    reference = tmp_path / "ref"
    shutil.copytree(tmp_path / "elsewhere/specs", reference / "specs")
    assert cli("build", str(reference / "specs")).exit_code == 0
    assert _tree_hash(tmp_path / "elsewhere/tools") == _tree_hash(reference / "tools")


def test_parallel_build_gives_the_same_bytes_as_a_serial_one(tmp_path: Path) -> None:
    """Enough specs for the worker processes to start (a fresh process, as the CLI runs)."""
    many = {
        f"tool_{i:02}.yaml": {
            "description": f"Tool {i}",
            "input_schema": {
                "type": "object",
                "properties": {"q": {"type": "string"}, f"n{i}": {"type": "integer"}},
                "required": ["q"],
            },
            "examples": [{"q": "x"}],
        }
        for i in range(40)
    }
    trees = []
    for jobs in ("2", "1"):
        project = tmp_path / f"jobs{jobs}"
        write_specs(project / "specs", many)
        result = cli_process(
            "build", "specs", "--out", "tools", cwd=project, env={"TOOLNEXUS_GEN_JOBS": jobs}
        )
        assert result.returncode == 0, result.stderr
        trees.append(_tree_hash(project / "tools"))
    assert trees[0] == trees[1]


def test_a_root_ref_to_an_object_is_an_object_root(build_package: Any) -> None:
    pkg = build_package(
        {
            "create_note.json": {
                "description": "Create a note",
                "input_schema": {
                    "$ref": "#/$defs/Note",
                    "$defs": {
                        "Note": {
                            "type": "object",
                            "properties": {"title": {"type": "string"}},
                            "required": ["title"],
                        }
                    },
                },
            }
        }
    )
    (entry,) = pkg.to_openai()
    assert entry["function"]["parameters"] == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }  # lifted to the root, the unused definition dropped
    (declaration,) = pkg.to_gemini()[0]["functionDeclarations"]
    assert declaration["parameters"]["type"] == "object"
    assert pkg.CreateNoteArgs.model_validate({"title": "x"}).title == "x"


@pytest.mark.parametrize(
    "files", [[], ["a"], ["b/é.py", "a", 'q"x\\y', "tab\there"], [f"m/{i}.py" for i in range(12)]]
)
def test_the_manifest_is_indented_json_of_the_sorted_names(files: list[str]) -> None:
    wanted = {"generator": "toolnexus-gen", "files": sorted(files)}
    assert _manifest_text(files) == json.dumps(wanted, indent=2) + "\n"
