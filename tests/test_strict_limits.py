"""Anthropic's per-request strict limits under strictify (reach): what goes out strict is counted
as it is sent, and the build leaves the tools that do not fit non-strict (TN226), for the whole
set or for each toolset, so no request it writes is one Anthropic refuses. Judged by the
documented limits in provider_rules, apart from the generator's own count."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from conftest import cli, generated, write_specs
from provider_rules import anthropic_request, nodes
from test_reach import REACH, import_sample

LIMITS = (20, 24, 16)


def cost(entry: dict[str, Any]) -> tuple[int, int]:
    """(optional, union parameters) of one entry's schema, as the judge counts them."""
    optional = unions = 0
    for _, node in nodes(entry["input_schema"]):
        required = node.get("required") or []
        optional += sum(1 for name in node.get("properties") or {} if name not in required)
        unions += "anyOf" in node or isinstance(node.get("type"), list)
    return optional, unions


def assert_none_would_fit(request: list[dict[str, Any]], relaxed: set[str]) -> None:
    """Each tool sent non-strict for the limits would take the request past them if strict."""
    strict = [e for e in request if e.get("strict") is True]
    optional = sum(cost(e)[0] for e in strict)
    unions = sum(cost(e)[1] for e in strict)
    for entry in request:
        if entry["name"] in relaxed:
            more = cost(entry)
            assert (
                len(strict) + 1 > LIMITS[0]
                or optional + more[0] > LIMITS[1]
                or unions + more[1] > LIMITS[2]
            ), entry["name"]


def relaxed_names(stderr: str) -> set[str]:
    return {
        line.split("/")[-1].split(".json")[0]
        for line in stderr.splitlines()
        if "warning[TN226]: anthropic: sent non-strict" in line
    }


def test_the_github_server_under_reach_sends_a_request_anthropic_takes(tmp_path: Path) -> None:
    project = import_sample(tmp_path / "github", "server-github")
    (project / "pyproject.toml").write_text(REACH)
    result = cli("build", "specs", "--out", "out", cwd=project)
    assert result.exit_code == 0, result.stderr
    anthropic = json.loads((project / "out/schemas/anthropic.json").read_text())
    assert len(anthropic) == 26 and anthropic_request(anthropic) == []
    relaxed = relaxed_names(result.stderr)
    assert relaxed == {e["name"] for e in anthropic if e["strict"] is False}
    assert len(relaxed) == 9  # 17 of the 26 stay strict: the cheapest first
    assert_none_would_fit(anthropic, relaxed)
    # the warning says which request and what it holds; TN221 is not said of those tools
    assert (
        "specs/update_issue.json:1:1: warning[TN226]: anthropic: sent non-strict (strictify): the "
        "whole set (every request sends it) already has 17 strict tools with 0 optional and 16 "
        "union parameters, and this tool (0 optional, 6 union) would take it past the "
        "per-request strict limits (20 tools, 24 optional, 16 union parameters)"
    ) in result.stderr
    assert "update_issue.json:1:1: warning[TN221]: anthropic" not in result.stderr
    assert "warning[TN221]: openai: sent in strict mode" in result.stderr  # no such limit there
    assert "reach: 64 removals described, 69 strict entries, 9 non-strict entries" in result.stdout
    # the non-strict entries keep the schema strictify made (a null still means absent)
    update = next(e for e in anthropic if e["name"] == "update_issue")
    assert update["input_schema"]["additionalProperties"] is False
    assert "warning[TN355]" not in result.stderr


def strict_specs(count: int, groups: dict[int, list[str]] | None = None) -> dict[str, Any]:
    """Tools with one optional property each (named `strict`: a property the flag must not
    touch): one union parameter each once strictify has made it nullable."""
    return {
        f"t{i:02}.json": {
            "description": f"tool {i}",
            **({"groups": groups[i]} if groups and i in groups else {}),
            "input_schema": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "strict": {"type": "boolean"}},
                "required": ["q"],
            },
        }
        for i in range(count)
    }


def test_each_toolset_stays_within_the_limits_and_a_tool_counts_in_each(tmp_path: Path) -> None:
    # a = t00..t19, b = t10..t29: t10..t19 are in both
    groups = {
        i: [g for g, members in (("a", range(20)), ("b", range(10, 30))) if i in members]
        for i in range(30)
    }
    write_specs(tmp_path / "specs", strict_specs(30, groups))
    (tmp_path / "pyproject.toml").write_text(
        REACH + '\n[tool.toolnexus-gen.toolsets]\na = {groups = ["a"]}\nb = {groups = ["b"]}\n'
    )
    result = cli("build", "specs", "--out", "pkg_sets", "--target", "anthropic", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(tmp_path))
    pkg = importlib.import_module("pkg_sets")
    relaxed = relaxed_names(result.stderr)
    # equal costs: name order; a holds t00..t15 (16 unions), b then t10..t15 and t20..t29
    assert relaxed == {"t16", "t17", "t18", "t19"}
    assert "toolset 'a' already has 16 strict tools with 0 optional and 16 union" in result.stderr
    for name in ("a", "b"):
        request = pkg.to_anthropic(toolset=name)
        assert anthropic_request(request) == [], name
        assert_none_would_fit(request, relaxed)
    # the whole set is no request when toolsets exist: over the limits there is a warning
    whole = pkg.to_anthropic()
    assert sum(e["strict"] for e in whole) == 26
    assert "warning[TN355]: anthropic: 26 strict tools" in result.stderr


def test_a_reused_entry_follows_the_limits_of_the_next_build(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(REACH)
    specs = write_specs(tmp_path / "specs", strict_specs(17))
    first = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=tmp_path)
    assert first.exit_code == 0, first.stderr
    assert relaxed_names(first.stderr) == {"t16"}
    entries = json.loads((tmp_path / "out/schemas/anthropic.json").read_text())
    assert [e["name"] for e in entries if not e["strict"]] == ["t16"]
    assert entries[16]["input_schema"]["properties"]["strict"] == {"type": ["boolean", "null"]}
    (specs / "t00.json").unlink()  # room for t16, whose unit (and entry) is reused
    second = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=tmp_path)
    assert second.exit_code == 0 and "TN226" not in second.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copytree(specs, fresh / "specs")
    shutil.copy(tmp_path / "pyproject.toml", fresh)
    again = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=fresh)
    assert again.exit_code == 0
    assert generated(tmp_path / "out") == generated(fresh / "out")
    entries = json.loads((tmp_path / "out/schemas/anthropic.json").read_text())
    assert all(e["strict"] for e in entries) and anthropic_request(entries) == []


def test_a_relaxed_tool_still_reads_null_as_absent(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(REACH)
    write_specs(tmp_path / "specs", strict_specs(17))
    result = cli("build", "specs", "--out", "pkg_relaxed", "--target", "anthropic", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    sys.path.insert(0, str(tmp_path))
    pkg = importlib.import_module("pkg_relaxed")

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        pass

    for i in range(17):
        setattr(Handlers, f"t{i:02}", lambda self, args, ctx: f"{args.q} {args.strict!r}")
    Handlers.__abstractmethods__ = frozenset()
    tk = pkg.Toolkit(Handlers())
    block = {"type": "tool_use", "id": "u1", "name": "t16", "input": {"q": "x", "strict": None}}
    (reply,) = tk.anthropic_tool_results([block])
    assert reply["content"] == "x None" and not reply.get("is_error")


def test_a_specs_own_strict_is_not_changed_without_strictify(tmp_path: Path) -> None:
    specs = strict_specs(21)
    for spec in specs.values():
        spec["strict"] = True
        spec["input_schema"]["additionalProperties"] = False
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "out", "--target", "anthropic", cwd=tmp_path)
    assert result.exit_code == 0  # the author's choice: reported, not changed
    assert "TN226" not in result.stderr and "warning[TN355]" in result.stderr
    entries = json.loads((tmp_path / "out/schemas/anthropic.json").read_text())
    assert all(e["strict"] for e in entries)
