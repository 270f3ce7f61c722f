"""`breaking` against hand-labelled schema changes (cases/breaking_labelled/cases.yaml: results
and list results, unions, patterns, closing objects, deprecation, accepted findings, formats),
labelled before the checker ran on them. Each case runs the rules as `breaking` does (selection,
per-rule severities, deprecation, accept entries, the version policy when a case asks) on one
tool's spec at REF and now, without a build, so the whole set takes a second or two. Precision and recall over every label must both be at least 0.97; each
case's mismatch is printed when they are not."""

from __future__ import annotations

import datetime
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolnexus_gen.breaking import accept, deprecation, policy, rules
from toolnexus_gen.breaking.surface import Surface, ToolSurface, from_spec

CASES = Path(__file__).parent / "cases" / "breaking_labelled" / "cases.yaml"
TODAY = datetime.date(2026, 12, 6)  # the date the labels were written against
SHOWN = ("warning", "error")
# the rules of the generated Python (handler methods, models): spec data has none to compare
PYTHON_RULES = ("TN520", "TN521", "TN522", "TN523", "TN524", "TN525", "TN526")


def load() -> list[dict[str, Any]]:
    return list(yaml.safe_load(CASES.read_text("utf-8")))


def surface(spec: dict[str, Any] | None) -> ToolSurface | None:
    if spec is None:
        return None
    tool = from_spec({"name": "t", **spec})
    if "http" in spec:
        return replace(tool, binding={"http": spec["http"]})
    return replace(tool, method="t")


def run(case: dict[str, Any]) -> set[str]:
    """The case's findings as labels: RULE:severity[:accepted] at warning or above, and TN544."""
    config = case.get("config", {})
    old, new = surface(case["old"]), surface(case["new"])
    found = rules.findings([rules.Pair(old, new, "REF")])
    found = accept.severities(found, {k.upper(): v for k, v in config.get("severity", {}).items()})
    versions = case.get("versions", [None, None])
    today = datetime.date.fromisoformat(case.get("today", TODAY.isoformat()))
    standing = config.get("deprecation", {"releases": 1})
    found = deprecation.apply(
        found,
        Surface({"t": old} if old else {}, False),
        deprecation.Policy(
            standing.get("releases"), standing.get("days"), versions[0], versions[1], today
        ),
    )
    entries = []
    for item in config.get("accept", []):
        table = item if isinstance(item, dict) else {"finding": item}
        parsed = accept.parse(table["finding"])
        assert isinstance(parsed, accept.Entry), parsed
        entries.append(replace(parsed, reason=table.get("reason"), until=table.get("until")))
    found, _ = accept.apply(found, entries, versions[1], today)
    if case.get("policy"):  # version_policy = true, with the versions at REF and now
        texts = [f'[project]\nversion = "{v}"\n' for v in versions]
        extra, _ = policy.check(
            found, "project.version", texts[0], texts[1], "pyproject.toml", "REF"
        )
        found += accept.apply(extra, entries, versions[1], today)[0]
    return {
        f"{f.rule}:{f.severity}" + (":accepted" if f.accepted else "")
        for f in found
        if (f.severity in SHOWN or f.rule == "TN544") and f.rule not in PYTHON_RULES
    }


def test_the_set_is_large_and_covers_each_kind() -> None:
    cases = load()
    assert len(cases) >= 80
    kinds = {case["name"].split("/")[0] for case in cases}
    assert kinds == {
        "results",
        "unions",
        "patterns",
        "closing",
        "deprecation",
        "accepted",
        "formats",
    }
    assert len({case["name"] for case in cases}) == len(cases)


def test_precision_and_recall() -> None:
    hits = extra = missed = 0
    wrong = []
    for case in load():
        expected, actual = set(case["expect"]), run(case)
        hits += len(expected & actual)
        extra += len(actual - expected)
        missed += len(expected - actual)
        if expected != actual:
            wrong.append(f"{case['name']}: expected {sorted(expected)}, got {sorted(actual)}")
    precision = hits / (hits + extra) if hits + extra else 1.0
    recall = hits / (hits + missed) if hits + missed else 1.0
    said = f"precision {precision:.3f}, recall {recall:.3f}:\n" + "\n".join(wrong)
    assert precision >= 0.97 and recall >= 0.97, said


@pytest.mark.parametrize(
    "name",
    [
        "results/required field added",
        "unions/number branch overlaps integer",
        "patterns/quantifier tightened",
        "closing/nested",
        "deprecation/tool removed after a release",
        "accepted/one finding",
        "accepted/an accepted finding needs no major version",
        "formats/int64 added to an integer",
        "formats/date-time added to a string",
    ],
)
def test_a_case_of_each_kind_is_found_exactly(name: str) -> None:
    (case,) = [c for c in load() if c["name"] == name]
    assert run(case) == set(case["expect"])
