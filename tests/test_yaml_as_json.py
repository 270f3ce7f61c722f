"""YAML read as JSON is, by every reader the product has (spec files and fragments, OpenAPI
documents, mcp.json, pyproject.toml, SKILL.md front matter): one limit on what YAML aliases may
expand to, and numbers JSON cannot carry (an integer past Python's 4,300 digits, written in
decimal or hexadecimal; a float past the double range) a located error, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, snapshot

from toolnexus_gen.toolspec.yaml_text import MAX_EXPANSION

DIGITS = "9" * 5000


def bomb(levels: int, head: str = "") -> str:
    """A billion-laughs document: `levels` lists of ten, each of ten aliases to the one before."""
    lines = [head + "x-a: &a [l, l, l, l, l, l, l, l, l, l]"]
    names = "abcdefghijklmnop"
    for before, name in zip(names[:levels], names[1 : levels + 1], strict=True):
        lines.append(f"x-{name}: &{name} [{', '.join([f'*{before}'] * 10)}]")
    return "\n".join(lines) + "\n"


OPENAPI_HEAD = "openapi: 3.0.3\ninfo: {title: T, version: '1'}\npaths: {}\n"


def test_the_alias_bomb_of_the_report_ends_at_the_limit_in_import_openapi(tmp_path: Path) -> None:
    text = bomb(8, OPENAPI_HEAD)  # 10**9 values, under 800 bytes
    assert len(text) < 800
    (tmp_path / "bomb.yaml").write_text(text)
    result = cli("import", "openapi", "bomb.yaml", cwd=tmp_path)
    assert result.exit_code == 2
    assert f"by more than {MAX_EXPANSION} values (an alias bomb?)" in result.stderr
    assert result.stderr.startswith("bomb.yaml:4:")
    assert not (tmp_path / "specs").exists()


def test_aliases_below_the_limit_are_read_as_written(tmp_path: Path) -> None:
    document = OPENAPI_HEAD.replace("paths: {}\n", "") + (
        "servers: [{url: 'https://t.example'}]\n"
        "x-shared: &p {name: q, in: query, schema: {type: string}}\n"
        "paths:\n  /a: {get: {operationId: a, parameters: [*p], responses: {'200': {description: ok}}}}\n"
        "  /b: {get: {operationId: b, parameters: [*p], responses: {'200': {description: ok}}}}\n"
    )
    (tmp_path / "doc.yaml").write_text(document)
    result = cli("import", "openapi", "doc.yaml", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    for name in ("a", "b"):
        spec = (tmp_path / f"specs/{name}.yaml").read_text()
        assert "q:" in spec


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        ("specs/n.yaml", f"description: n\nx-n: {DIGITS}\n", "specs/n.yaml:2:6: error[TN101]"),
        ("specs/n.yaml", f"description: n\nx-n: -{DIGITS}\n", "specs/n.yaml:2:6: error[TN101]"),
        (
            "specs/n.yaml",
            f"description: n\nx-n: 0x{'f' * 4000}\n",
            "specs/n.yaml:2:6: error[TN101]",
        ),
        (
            "specs/n.json",
            f'{{"description": "n",\n "x-n": {DIGITS}}}',
            "specs/n.json:2:9: error[TN101]",
        ),
        (
            "specs/n.json",
            '{"description": "n", "x-n": -1.5e999}',
            "specs/n.json:1:29: error[TN101]",
        ),
        (
            "specs/_f.yaml",
            f"type: integer\nmaximum: {DIGITS}\n",
            "specs/_f.yaml:2:10: error[TN101]",
        ),
        ("specs/n.yaml", bomb(6, "description: n\n"), "error[TN104]: YAML aliases expand"),
        (
            "pyproject.toml",
            f"[tool.toolnexus-gen]\nmax_tool_tokens = {DIGITS}\n",
            "pyproject.toml:2:19: error[TN801]",
        ),
    ],
)
def test_build_refuses_them_where_they_stand(
    tmp_path: Path, rel: str, text: str, expected: str
) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs/ok.yaml").write_text(
        "description: ok\ninput_schema: {type: object, properties: {f: {$ref: _f.yaml}}}\n"
        if rel == "specs/_f.yaml"
        else "description: ok\n"
    )
    (tmp_path / rel).write_text(text)
    before = snapshot(tmp_path)
    result = cli("build", "specs", "--out", "tools", cwd=tmp_path)
    assert result.exit_code == 2
    assert expected in result.stderr, result.stderr
    assert "digits; write it as a string" in result.stderr or "1e999" not in text
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_import_openapi_refuses_a_long_integer_where_it_stands(tmp_path: Path, suffix: str) -> None:
    document = {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "1"},
        "paths": {},
        "x-n": 0,
    }
    text = json.dumps(document, indent=1).replace('"x-n": 0', f'"x-n": {DIGITS}')
    (tmp_path / f"doc.{suffix}").write_text(text)  # JSON is YAML too
    result = cli("import", "openapi", f"doc.{suffix}", cwd=tmp_path)
    assert result.exit_code == 2
    assert (
        f"doc.{suffix}:8:9: error[TN101]" in result.stderr
        and "an integer of 5000 digits" in result.stderr
    )


def test_mcp_json_and_skill_front_matter_too(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.toolnexus-gen]\nskills = "skills"\n')
    (tmp_path / "mcp.json").write_text(f'{{"mcpServers": {{"s": {{"timeout": {DIGITS}}}}}}}')
    result = cli("sync", cwd=tmp_path)
    assert result.exit_code == 2
    assert "mcp.json:1:34: error[TN401]: an integer of 5000 digits" in result.stderr

    skill = tmp_path / "skills/big/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\nname: big\ndescription: Big\nx-n: {DIGITS}\n---\nBody.\n")
    result = cli("build", "specs", "--out", "tools", cwd=tmp_path)
    assert result.exit_code == 2
    assert "skills/big/SKILL.md:4:6: error[TN423]" in result.stderr
    assert "an integer of 5000 digits" in result.stderr
