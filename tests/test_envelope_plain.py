"""The spec envelope told valid without jsonschema (validate._plainly_valid) only when jsonschema
finds nothing wrong with it, and an edit loop's build of an edited description never imports
jsonschema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import cli, generated, reference, write_specs
from hypothesis import given, settings
from hypothesis import strategies as st

from toolnexus_gen.toolspec import validate

SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
# values near what each key takes, and anything else
WORDS = st.sampled_from(["", " ", "\n", "x", "Forecast", "a" * 129, "bad name", "ok_name.1"])
VALUES = {
    "name": WORDS | JSON,
    "title": WORDS | JSON,
    "description": WORDS | st.text(max_size=5) | JSON,
    "input_schema": st.just({"type": "object"}) | JSON,
    "output_schema": st.just({"type": "object"}) | JSON,
    "examples": st.lists(st.just({"a": 1}) | JSON, max_size=3) | JSON,
    "strict": st.booleans() | JSON,
    "defer_loading": st.booleans() | JSON,
    "annotations": st.fixed_dictionaries(
        {}, optional={"title": WORDS | JSON, "readOnlyHint": st.booleans() | JSON}
    )
    | JSON,
    "groups": st.lists(WORDS, max_size=3) | JSON,
    "targets": st.fixed_dictionaries({}, optional={"only": st.lists(WORDS, max_size=2)}) | JSON,
    "x-note": JSON,
}
ENVELOPES = st.fixed_dictionaries(
    {"description": VALUES["description"]},
    optional={key: value for key, value in VALUES.items() if key != "description"},
)


def jsonschema_errors(envelope: dict[str, Any]) -> list[str]:
    return [e.message for e in validate._envelope_validator().iter_errors(envelope)]


@settings(max_examples=400, deadline=None)
@given(ENVELOPES)
def test_told_valid_without_jsonschema_only_when_jsonschema_agrees(
    envelope: dict[str, Any],
) -> None:
    if validate._plainly_valid(envelope):
        assert jsonschema_errors(envelope) == []


def test_the_usual_envelopes_are_told_without_jsonschema() -> None:
    usual: dict[str, Any] = {
        "name": "get_weather",
        "title": "Weather",
        "description": "Current weather for a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "output_schema": {"type": "object"},
        "examples": [{"city": "Paris"}],
        "strict": True,
        "annotations": {"readOnlyHint": True, "title": "Weather"},
        "x-owner": ["anything"],
    }
    assert validate._plainly_valid(usual) and jsonschema_errors(usual) == []
    for wrong in (
        {"description": "   "},  # the pattern \S
        {"description": 3},
        {"description": "d", "examples": [{"city": "Paris"}, 3]},
        {"description": "d", "annotations": {"readOnlyHint": "yes"}},
        {"description": "d", "name": "x" * 129},
    ):
        assert not validate._plainly_valid(wrong) and jsonschema_errors(wrong)


SPEC = {
    "description": "Forecast for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
    "examples": [{"city": "Lyon", "days": 2}],
    "annotations": {"readOnlyHint": True},
}


def modules_after_build(project: Path) -> tuple[int, str, set[str]]:
    """A command-line build in a fresh process: its exit code, stderr and the modules it
    imported of jsonschema, referencing and datamodel-code-generator."""
    code = (
        "import sys\nfrom toolnexus_gen.cli import main\n"
        "sys.argv = ['toolnexus-gen', 'build', 'specs', '--out', 'out', '-q']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    status = exc.code or 0\n"
        "heavy = ('jsonschema', 'referencing', 'datamodel_code_generator')\n"
        "print(status, sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    status, _, found = done.stdout.strip().partition(" ")
    return int(status), done.stderr, set(json.loads(found.replace("'", '"')))


def test_an_edited_description_is_built_without_jsonschema(tmp_path: Path) -> None:
    project = tmp_path / "project"
    specs = {f"{name}.json": SPEC for name in ("alpha", "beta", "gamma")}
    write_specs(project / "specs", specs)
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    for name in ("beta", "gamma"):  # another tool each time: each one's checks are remembered
        write_specs(project / "specs", {f"{name}.json": {**SPEC, "description": f"{name}, new"}})
        status, stderr, imported = modules_after_build(project)
        assert status == 0 and not imported, (stderr, imported)
        assert generated(project / "out") == reference(project)
    # an invalid description is still checked by jsonschema, with the same diagnostic
    write_specs(project / "specs", {"beta.json": {**SPEC, "description": " "}})
    status, stderr, imported = modules_after_build(project)
    assert status == 2 and "jsonschema" in imported
    assert "specs/beta.json:2:18: error[TN110]: description must be a non-empty string" in stderr
