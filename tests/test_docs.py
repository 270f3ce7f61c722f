"""The documentation stays true: the site builds with `mkdocs build --strict` (no broken link or
page), and the generated references hold every command, key and code. (Every code block runs:
test_docs_pages.py.)"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_docs_pages import PAGES


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stderr
    return out


def text_of(page: Path) -> str:
    body = re.sub(r"<[^>]+>", " ", page.read_text("utf-8"))
    return " ".join(html.unescape(body).split())


def test_no_history_in_the_docs() -> None:
    for page in PAGES:
        text = page.read_text("utf-8")
        assert not re.search(r"\bissue \d+|\bthis session\b|\bafter issue\b", text, re.I), page


def test_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text("utf-8").splitlines()) < 250


def test_every_command_and_option_is_in_the_cli_reference(site: Path) -> None:
    import click

    from toolnexus_gen.cli import main

    page = (site / "reference/cli/index.html").read_text("utf-8")
    for name, command in main.commands.items():  # type: ignore[attr-defined]
        assert f"toolnexus-gen {name}" in page, name
        for param in command.params:
            if isinstance(param, click.Option):
                assert any(opt in page for opt in param.opts), (name, param.opts)


def test_every_configuration_key_is_in_the_reference(site: Path) -> None:
    from toolnexus_gen.config.pyproject import KEYS
    from toolnexus_gen.targets.registry import OPTIONS

    page = (site / "reference/configuration/index.html").read_text("utf-8")
    for key in KEYS:
        assert f'id="{key}"' in page, key
    for target, options in OPTIONS.items():
        for option, values in options.items():
            assert f"[tool.toolnexus-gen.{target}]" in page and option in page
            for value in values:
                assert f"&quot;{value}&quot;" in page or f'"{value}"' in page, value


def test_every_code_has_its_anchor_saying_what_explain_says(site: Path) -> None:
    from toolnexus_gen.diagnostics.catalogue import all_codes, entry

    page = (site / "reference/diagnostics/index.html").read_text("utf-8")
    sections = re.split(r'(?=<h3 id="TN\d+")', page)
    by_code = {m.group(1): s for s in sections if (m := re.match(r'<h3 id="(TN\d+)"', s))}
    assert sorted(by_code) == all_codes()
    for code in all_codes():
        found = entry(code)
        assert found is not None
        # the page's text without its tags; the catalogue's text without its code-span ticks
        section = html.unescape(re.sub(r"<[^>]+>", "", by_code[code])).replace("`", "")
        section = " ".join(section.split())
        for part in (found.title, found.applies, found.why, found.fix, found.provider_error):
            if part:
                assert " ".join(part.replace("`", "").split()) in section, (code, part)


def test_the_site_links_every_guide(site: Path) -> None:
    index = (site / "index.html").read_text("utf-8")
    for page in (ROOT / "docs/guides").glob("*.md"):
        assert f"guides/{page.stem}/" in index, page.name
