"""[tool.toolnexus-gen] is one declarative table (config/pyproject.py KEYS): every key the code
reads is in it, every key in it is accepted with its documented example, and the docs'
configuration reference is made from it (tests/test_docs.py checks the page)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolnexus_gen.config import pyproject
from toolnexus_gen.config.pyproject import KEYS, load_config
from toolnexus_gen.diagnostics import DiagnosticsError


class Recording(dict):  # type: ignore[type-arg]
    """A [tool.toolnexus-gen] table that notes every key the reader asks for."""

    asked: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        Recording.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        Recording.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        Recording.asked.add(str(key))
        return super().__contains__(key)


def test_every_key_the_reader_asks_for_is_in_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads = pyproject.tomllib.loads

    def recording(text: str) -> Any:
        data = loads(text)
        data["tool"]["toolnexus-gen"] = Recording(data["tool"]["toolnexus-gen"])
        return data

    monkeypatch.setattr(pyproject.tomllib, "loads", recording)
    Recording.asked = set()
    for text in ("", "\n".join(f"{key.name} = {key.example}" for key in KEYS.values())):
        (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen]\n{text}\n")
        (tmp_path / "skills").mkdir(exist_ok=True)
        load_config(tmp_path)
    from toolnexus_gen.targets.registry import NAMES

    assert Recording.asked, "the reader asked for nothing: the recording missed it"
    assert Recording.asked - set(NAMES) <= set(KEYS), Recording.asked - set(KEYS)


@pytest.mark.parametrize("key", list(KEYS))
def test_each_key_is_accepted_with_its_example_and_refused_with_a_wrong_type(
    key: str, tmp_path: Path
) -> None:
    entry = KEYS[key]
    assert entry.kind and entry.default and entry.meaning, key
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen]\n{key} = {entry.example}\n")
    load_config(tmp_path)  # no diagnostic
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolnexus-gen]\n{key} = 3.5\n")
    with pytest.raises(DiagnosticsError) as raised:
        load_config(tmp_path)
    assert [d.code for d in raised.value.diagnostics] == ["TN802"]
    assert raised.value.diagnostics[0].line == 2


def test_an_unknown_key_names_every_known_one(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\nspec = 'specs'\n")
    with pytest.raises(DiagnosticsError) as raised:
        load_config(tmp_path)
    message = raised.value.diagnostics[0].message
    assert all(key in message for key in KEYS)
