"""The incremental state is a plan, not a hub: a build reads the last build's record once into
one plan (what changed, what to reuse, what to make), the stages run over it, and the record is
saved once. Counted on real builds: every call into toolnexus_gen/incremental/ from outside it."""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from conftest import ROOT, WEATHER, generated, reference, write_specs

from toolnexus_gen import session

INCREMENTAL = str(ROOT / "toolnexus_gen" / "incremental")


def entries_into_incremental(fn: Any, *args: Any) -> tuple[Any, Counter[str]]:
    """fn(*args), and each function of incremental/ called from outside it, counted."""
    calls: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(INCREMENTAL):
            return
        if code.co_name == "<module>":  # its first import, not a step of the walk
            return
        caller = frame.f_back
        if caller is not None and not caller.f_code.co_filename.startswith(INCREMENTAL):
            module = Path(frame.f_code.co_filename).stem
            calls[f"{module}.{frame.f_code.co_name}"] += 1

    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    return result, calls


def build(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Counter[str]]:
    monkeypatch.chdir(root)
    return entries_into_incremental(session.build, Path("specs"), Path("out"), (), False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    specs = {f"tool_{i}.yaml": {**WEATHER["get_weather.yaml"]} for i in range(6)}
    specs["shared/_types.yaml"] = {"$defs": {"Units": {"type": "string", "enum": ["c", "f"]}}}
    specs["forecast.yaml"] = {
        "description": "Forecast",
        "input_schema": {
            "type": "object",
            "properties": {"units": {"$ref": "shared/_types.yaml#/$defs/Units"}},
        },
    }
    write_specs(tmp_path / "specs", specs)
    return tmp_path


def test_a_build_enters_incremental_once_to_plan_and_once_to_save(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, calls = build(root, monkeypatch)  # no record yet: everything is made
    assert first.report is not None and not first.noop
    assert calls == Counter({"plan.plan": 1, "plan.save": 1})

    # one spec edited (its schema too), one added: the others are reused from the record
    path = root / "specs/tool_3.yaml"
    path.write_text(path.read_text().replace("city:", "town:").replace("- city", "- town"))
    (root / "specs/extra.json").write_text(json.dumps({"description": "Added"}))
    again, calls = build(root, monkeypatch)
    assert again.report is not None and not again.noop
    assert calls == Counter({"plan.plan": 1, "plan.save": 1})
    assert generated(root / "out") == reference(root)  # and the result is a fresh build's

    # nothing changed: the plan answers, nothing is saved
    noop, calls = build(root, monkeypatch)
    assert noop.noop
    assert calls == Counter({"plan.plan": 1})


def test_a_build_in_the_same_process_starts_from_the_record_in_memory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = build(root, monkeypatch)
    for name in ("state.json", "units.json", "memo.json"):  # never read back
        (root / "out/.toolnexus-gen.cache" / name).write_bytes(b"damaged")
    path = root / "specs/tool_1.yaml"
    path.write_text(path.read_text().replace("Current weather", "The weather now"))
    monkeypatch.chdir(root)
    again, calls = entries_into_incremental(
        session.build, Path("specs"), Path("out"), (), False, first.record
    )
    assert again.report is not None and again.report.written
    assert calls == Counter({"plan.plan": 1, "plan.save": 1})
    assert generated(root / "out") == reference(root)


def test_only_the_session_and_the_pipelines_ends_import_incremental() -> None:
    """The stages never import incremental/ (they get a plan): only session.py (plan) and
    pipeline/build.py (save_build, and list's plan) do."""
    importers = set()
    for path in (ROOT / "toolnexus_gen").rglob("*.py"):
        if "incremental" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "toolnexus_gen.incremental"
            ):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"toolnexus_gen/session.py", "toolnexus_gen/pipeline/build.py"}
