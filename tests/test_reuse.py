"""A build reuses what the last one made of each unchanged spec, and is never the worse for it:
after any sequence of changes, the output is byte for byte what a build from scratch writes."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cli, generated, reference, write_specs
from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus_gen import session
from toolnexus_gen.config.options import resolve_options
from toolnexus_gen.config.pyproject import load_config
from toolnexus_gen.incremental import cache
from toolnexus_gen.incremental.plan import plan
from toolnexus_gen.pipeline.build import generate
from toolnexus_gen.pipeline.units import files_of
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.base import (
    assemble,
    dump_json,
    encode_entry,
    entry_depth,
    reassemble,
)


def spec(i: int, version: int = 0) -> dict[str, Any]:
    return {
        "description": f"Tool {i}, version {version}",
        "input_schema": {
            "type": "object",
            "properties": {
                "q": {"type": "string", "description": f"query v{version}"},
                "units": {"$ref": "_shared/types.yaml#/$defs/Units"},
                **({f"extra_{version}": {"type": "integer"}} if version % 2 else {}),
            },
            "required": ["q"],
        },
        "examples": [{"q": "x"}],
    }


SHARED = {"$defs": {"Units": {"type": "string", "enum": ["c", "f"]}}}


def project_with(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "project"
    files: dict[str, Any] = {f"tool_{i:02}.yaml": spec(i) for i in range(count)}
    files["_shared/types.yaml"] = SHARED
    write_specs(root / "specs", files)
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    return root


def library_build(root: Path) -> Any:
    """A build through the library, as the CLI runs it, to see how many units were reused."""
    old = Path.cwd()
    os.chdir(root)
    try:
        options = resolve_options(load_config(root), Path("specs"), Path("out"), None)
        return generate(options, plan(options))
    finally:
        os.chdir(old)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(json_values, max_size=4))
def test_spliced_entries_are_exactly_the_whole_file_encoded(entries: list[Any]) -> None:
    for document in files_of(["gemini", "openai", "bedrock"]).values():
        depth = entry_depth(document)
        encoded = [encode_entry(entry, depth) for entry in entries]
        text, places = assemble(document, encoded)
        assert text == dump_json(document(entries))
        assert [text[start:end] for start, end in places] == encoded


@settings(max_examples=80, deadline=None)
@given(
    st.lists(json_values, min_size=1, max_size=40),  # a few edits among many: spliced
    st.lists(st.tuples(st.integers(0, 39), json_values), max_size=5),
    st.sampled_from(["gemini", "openai", "bedrock"]),
)
def test_an_entry_spliced_into_the_last_assembly_is_the_file_assembled_anew(
    entries: list[Any], edits: list[tuple[int, Any]], target: str
) -> None:
    """What the watch does: the file assembled before, its changed entries put in place."""
    document = files_of([target])[TARGETS[target].file]
    depth = entry_depth(document)
    before = [encode_entry(entry, depth) for entry in entries]
    after = list(before)
    for index, entry in edits:
        after[index % len(after)] = encode_entry(entry, depth)
    last = reassemble(document, before)
    made = reassemble(document, after, last)
    assert (made.text, made.places) == assemble(document, after)
    assert made.text == dump_json(document([json.loads(text) for text in after]))
    # and again from that one, as the next edit would
    again = reassemble(document, before, made)
    assert (again.text, again.places) == assemble(document, before)


def test_one_edit_reuses_every_other_spec(tmp_path: Path) -> None:
    root = project_with(tmp_path, 40)
    (root / "specs/tool_07.yaml").write_text(json.dumps(spec(7, 1)))
    result = library_build(root)
    assert result.files is not None and result.reused == 39
    expected = {k: v.decode() for k, v in reference(root).items() if k != ".toolnexus-gen.json"}
    assert result.files == expected  # the manifest is output.write's, not generate's
    # A shared file reaches every spec: none of them can be reused.
    (root / "specs/_shared/types.yaml").write_text(
        json.dumps({"$defs": {"Units": {"type": "string"}}})
    )
    assert library_build(root).reused == 0


def test_a_reused_specs_warnings_are_still_reported(tmp_path: Path) -> None:
    root = project_with(tmp_path, 3)
    long = spec(1) | {"description": "x" * 1100}  # over OpenAI's 1024: a warning (TN304)
    (root / "specs/tool_01.yaml").write_text(json.dumps(long))
    first = cli("build", "specs", "--out", "out", cwd=root)
    assert first.exit_code == 0 and "warning[TN304]" in first.stderr
    (root / "specs/tool_02.yaml").write_text(json.dumps(spec(2, 1)))  # another spec changes
    again = cli("build", "specs", "--out", "out", cwd=root)
    assert again.exit_code == 0
    assert again.stderr == first.stderr  # tool_01's warnings, from its reused unit, unchanged


def test_a_clash_with_a_reused_spec_points_at_both(tmp_path: Path) -> None:
    root = project_with(tmp_path, 3)
    (root / "specs/tool-01.yaml").write_text(json.dumps(spec(9)))  # tool_01 in Python too
    result = cli("build", "specs", "--out", "out", cwd=root)
    assert result.exit_code == 2
    # reported at the reused spec's name, naming the new one
    assert (
        "specs/tool_01.yaml:1:1: error[TN116]: tools 'tool-01' (specs/tool-01.yaml) and "
        "'tool_01' both become the Python handler method 'tool_01'"
    ) in result.stderr


STEPS = [
    "edit",
    "describe",
    "add",
    "remove",
    "shared",
    "break_and_fix",
    "tamper_output",
    "damage_units",
    "foreign_units",
    "config",
]


@pytest.mark.parametrize(
    ("seed", "in_memory"), [(0, False), (1, False), (2, False), (3, True), (4, True)]
)
def test_any_sequence_of_changes_builds_what_a_fresh_build_writes(
    tmp_path: Path, seed: int, in_memory: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`in_memory`: every build starts from the record the last one left in this process, as
    `build --watch` does, never reading the cache files back."""
    rng = random.Random(seed)
    root = project_with(tmp_path, 8)
    specs, out = root / "specs", root / "out"
    last: list[Any] = [None]

    def build() -> int:
        if not in_memory:
            result = cli("build", "specs", "--out", "out", cwd=root)
            assert result.exit_code in (0, 2), result.stderr
            return int(result.exit_code)
        monkeypatch.chdir(root)
        outcome = session.build(Path("specs"), Path("out"), (), False, last[0])
        last[0] = outcome.record or last[0]
        return 2 if outcome.invalid else 0

    other = tmp_path / "other"
    versions: dict[str, int] = {}
    for step in range(14):
        tools = sorted(p.name for p in specs.glob("tool_*.yaml"))
        action = rng.choice(STEPS)
        name = rng.choice(tools)
        if action == "edit":
            versions[name] = versions.get(name, 0) + 1
            (specs / name).write_text(json.dumps(spec(step, versions[name])))
        elif action == "describe":
            data = yaml.safe_load((specs / name).read_text())
            data["description"] = f"Described at step {step}"
            (specs / name).write_text(json.dumps(data))
        elif action == "add":
            (specs / f"tool_{50 + step:02}.yaml").write_text(json.dumps(spec(50 + step)))
        elif action == "remove" and len(tools) > 2:
            (specs / name).unlink()
        elif action == "shared":
            enum = rng.sample(["c", "f", "k", "r"], rng.randint(1, 4))
            (specs / "_shared/types.yaml").write_text(
                json.dumps({"$defs": {"Units": {"type": "string", "enum": enum}}})
            )
        elif action == "break_and_fix":
            before = generated(out)
            good = (specs / name).read_text()
            (specs / name).write_text("description: [unclosed\n")
            assert build() == 2
            assert generated(out) == before, "a failed build writes nothing"
            (specs / name).write_text(good + "\n")
        elif action == "tamper_output":
            path = out / "schemas/anthropic.json"
            path.write_text(path.read_text().replace("Tool", "Tampered", 1))
        elif action == "damage_units":
            (out / cache.CACHE_DIR / cache.UNITS).write_bytes(b"0" * 64 + b"\n{}")
        elif action == "foreign_units":
            # units.json of another build (a different tree), with its own valid checksum
            if not (other / "out").exists():
                write_specs(
                    other / "specs", {"tool_00.yaml": spec(0, 3), "_shared/types.yaml": SHARED}
                )
                assert cli("build", "specs", "--out", "out", cwd=other).exit_code == 0
            units = other / "out" / cache.CACHE_DIR / cache.UNITS
            (out / cache.CACHE_DIR / cache.UNITS).write_bytes(units.read_bytes())
        elif action == "config":
            field = rng.choice(["parameters", "parametersJsonSchema"])
            (root / "pyproject.toml").write_text(
                f'[tool.toolnexus-gen.gemini]\nschema_field = "{field}"\n'
            )
        assert build() == 0, f"step {step} ({action})"
        assert generated(out) == reference(root), f"step {step} ({action}) left a different tree"
        assert cli("build", "specs", "--out", "out", "--check", cwd=root).exit_code == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_warm_process_writes_after_each_edit_what_a_cold_build_writes(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build --watch's builds (the record in memory: provider files spliced from the last
    assembly, spec paths and handler methods taken from the last build) against a build from
    scratch, after every edit: the description or the schema of one tool or two (spliced), of
    several (assembled anew), tools added or gone."""
    rng = random.Random(seed)
    specs = tmp_path / "specs"
    files: dict[str, Any] = {f"tool_{i:02}.yaml": spec(i) for i in range(20)}
    write_specs(specs, files | {"_shared/types.yaml": SHARED})
    monkeypatch.chdir(tmp_path)
    last = session.build(Path("specs"), Path("out"), (), False).record
    for step in range(10):
        kind = rng.choice(["describe", "describe", "describe", "schema", "add", "remove"])
        chosen = rng.sample(range(24), rng.choice([1, 1, 2, 5]))
        for i in chosen:
            path = specs / f"tool_{i:02}.yaml"
            if kind == "remove":
                path.unlink(missing_ok=True)
            elif kind == "add" or not path.exists():
                path.write_text(json.dumps(spec(i, step)))
            elif kind == "describe":
                data = yaml.safe_load(path.read_text())
                data["description"] = f"Tool {i}, described at step {step}" + "!" * rng.randint(
                    0, 9
                )
                path.write_text(json.dumps(data))
            else:
                path.write_text(json.dumps(spec(i, step + 1)))
        outcome = session.build(Path("specs"), Path("out"), (), False, last)
        assert outcome.record is not None and not outcome.invalid
        last = outcome.record
        assert generated(tmp_path / "out") == reference(tmp_path), f"step {step}: {kind} {chosen}"


def test_a_tool_info_reads_back_from_its_record_as_it_was() -> None:
    from toolnexus_gen.incremental.reuse import _info, _info_record
    from toolnexus_gen.ir import PyNames, ToolInfo

    info = ToolInfo(
        "search",
        "Search",
        PyNames("search", "SearchArgs", "search"),
        "specs/search.yaml",
        ((1, 1), (2, 3), (4, 5), (6, 7), (8, 9)),
        frozenset({"openai", "gemini"}),
        True,
        (("anthropic", 2, 1),),
        (("gemini", "search_x"),),
        (("openai", '{"a": "b"}'),),
        (("openai", '{"map": {}}'),),
        '{"http": {}}',
        ("web", "files"),
        True,
        "reach",
        "web",
        (("openai", 120), ("gemini", 110)),
    )
    record = json.loads(json.dumps(_info_record(info)))  # as units.json holds it
    assert _info(record) == info
    bare = ToolInfo("now", "Now", PyNames("now", "NowArgs", "now"), "specs/now.yaml", ())
    assert _info(json.loads(json.dumps(_info_record(bare)))) == bare


def test_units_json_keeps_the_lines_of_unchanged_records_and_never_trusts_a_line_blindly(
    tmp_path: Path,
) -> None:
    """A build encodes only the records of the units it made; the others keep their lines, as
    the last build wrote them. A record on the wrong spec's line (a units.json edited, its
    checksums made good again) is a record whose key does not hold: the spec is made afresh."""
    root = project_with(tmp_path, 4)
    units = root / "out" / cache.CACHE_DIR / cache.UNITS
    before = units.read_bytes().split(b"\n")
    (root / "specs/tool_02.yaml").write_text(json.dumps(spec(2, 1)))
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    after = units.read_bytes().split(b"\n")
    assert len(after) == len(before) == 4 + 3  # checksum, head, a line per unit, the end
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [0, 1, 2 + 2]  # the checksum, the head (layout), tool_02's record
    assert generated(root / "out") == reference(root)

    # tool_00's line says tool_01's record, the two specs alike: checksums made to match
    (root / "specs/tool_00.yaml").write_bytes((root / "specs/tool_01.yaml").read_bytes())
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    lines = units.read_bytes().split(b"\n")
    first, second = (lines[2].split(b":", 1), lines[3].split(b":", 1))
    lines[2] = first[0] + b":" + second[1]
    text = b"\n".join(lines[1:])
    units.write_bytes(cache.sha(text).encode() + b"\n" + text)
    state_path = root / "out" / cache.CACHE_DIR / cache.STATE
    state = json.loads(state_path.read_bytes().partition(b"\n")[2])
    state["units"] = cache.sha(text)
    state_text = json.dumps(state).encode()
    state_path.write_bytes(cache.sha(state_text).encode() + b"\n" + state_text)
    (root / "specs/tool_03.yaml").write_text(json.dumps(spec(3, 1)))  # a build, not a no-op
    result = library_build(root)
    assert result.reused == 2  # tool_01 and tool_02; tool_00's record does not hold
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    assert generated(root / "out") == reference(root)
