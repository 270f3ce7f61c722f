"""Every code block of README.md and docs/ runs (tests/docs_runner.py says how), or is marked
with the reason it does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT
from docs_runner import blocks, run_page

PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")], key=lambda p: p.relative_to(ROOT)
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_code_block_runs(page: Path, tmp_path: Path) -> None:
    report = run_page(page, tmp_path)
    found, _ = blocks(page.read_text("utf-8"))
    assert report.run + report.checked + len(report.skipped) == len(found)
