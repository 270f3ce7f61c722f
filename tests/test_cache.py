"""The build cache makes builds faster and never wrong: every input is in its key, and a missing,
stale or corrupted cache is ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import WEATHER, cli, generated, reference, write_specs

from toolnexus_gen.incremental import cache

SHARED = {
    **WEATHER,
    "_types.yaml": {"$defs": {"Units": {"type": "string", "enum": ["c", "f"]}}},
    "forecast.yaml": {
        "description": "Forecast",
        "input_schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"$ref": "_types.yaml#/$defs/Units"},
            },
            "required": ["city"],
        },
        "examples": [{"city": "Oslo", "units": "c"}],
    },
}


def imports_in_fresh_process(cwd: Path, args: list[str], module: str) -> tuple[bool, str]:
    """Run the command line with `args` in a fresh process: whether it imported `module`,
    and everything it printed before that answer (last line: `IMPORTED|NOT <exit code>`)."""
    code = (
        "import sys\nfrom toolnexus_gen.cli import main\n"
        f"sys.argv = ['toolnexus-gen', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
        f"print('IMPORTED' if {module!r} in sys.modules else 'NOT', code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.split()[-2] == "IMPORTED", done.stdout


def uses_pipeline(project: Path, *args: str) -> bool:
    """Whether a build in a fresh process had to import the pipeline (no fast path)."""
    build = ["build", "specs", "--out", "out", "-q", *args]
    return imports_in_fresh_process(project, build, "toolnexus_gen.toolspec.validate")[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_specs(root / "specs", SHARED)
    assert cli("build", "specs", "--out", "out", cwd=root).exit_code == 0
    return root


def test_noop_builds_and_checks_skip_the_pipeline(project: Path) -> None:
    assert not uses_pipeline(project)
    assert not uses_pipeline(project, "--check")
    os.utime(project / "specs/now.yaml")  # touched, same bytes: still a no-op (hash compared)
    assert not uses_pipeline(project)


@pytest.mark.parametrize(
    "change",
    ["edit_spec", "edit_shared_ref", "add_spec", "remove_spec", "change_config", "edit_output"],
)
def test_every_input_invalidates(project: Path, change: str) -> None:
    specs = project / "specs"
    if change == "edit_spec":
        (specs / "now.yaml").write_text("description: Current time, edited\n")
    elif change == "edit_shared_ref":
        (specs / "_types.yaml").write_text(
            json.dumps({"$defs": {"Units": {"type": "string", "enum": ["c", "f", "k"]}}})
        )
    elif change == "add_spec":
        (specs / "later.yaml").write_text("description: Added later\n")
    elif change == "remove_spec":
        (specs / "now.yaml").unlink()
    elif change == "change_config":
        (project / "pyproject.toml").write_text(
            '[tool.toolnexus-gen.gemini]\nschema_field = "parametersJsonSchema"\n'
        )
    elif change == "edit_output":
        path = project / "out/schemas/openai.json"
        path.write_text(path.read_text().replace("Current time", "Tampered"))
    check = cli("build", "specs", "--out", "out", "--check", cwd=project)
    assert check.exit_code == 1, check.output + check.stderr
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    assert generated(project / "out") == reference(project)
    assert cli("build", "specs", "--out", "out", "--check", cwd=project).exit_code == 0


def test_check_is_exact_even_when_stat_is_unchanged(project: Path) -> None:
    path = project / "out/schemas/mcp.json"
    stat = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Current", b"Cxrrent"))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime
    result = cli("build", "specs", "--out", "out", "--check", cwd=project)
    assert result.exit_code == 1 and "Cxrrent" in result.stderr


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "wrong_checksum", "deleted", "empty_body", "stale_state"],
)
def test_a_corrupted_cache_never_yields_wrong_output(project: Path, damage: str) -> None:
    specs = project / "specs"
    folder = project / "out" / cache.CACHE_DIR
    for name in (cache.STATE, cache.UNITS, cache.MEMO):
        path = folder / name
        raw = path.read_bytes()
        if damage == "garbage":
            path.write_bytes(b"\x00\xffnot json at all")
        elif damage == "truncated":
            path.write_bytes(raw[: len(raw) // 2])
        elif damage == "wrong_checksum":
            checksum, _, body = raw.partition(b"\n")
            path.write_bytes(b"0" * len(checksum) + b"\n" + body)
        elif damage == "deleted":
            path.unlink()
        elif damage == "empty_body":
            path.write_bytes(cache.sha(b"{}").encode() + b"\n{}")
        elif damage == "stale_state" and name == cache.STATE:
            # A well-formed state that says every output is up to date, written for other
            # inputs: its recorded input hashes no longer match, so it must not be believed.
            body = json.loads(raw.partition(b"\n")[2])
            for entry in body["inputs"].values():
                entry[:2] = [0, 0]  # force the hash comparison
            text = json.dumps(body).encode()
            path.write_bytes(cache.sha(text).encode() + b"\n" + text)
    (specs / "now.yaml").write_text("description: Current time, after the damage\n")
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    assert generated(project / "out") == reference(project)
    assert b"after the damage" in (project / "out/schemas/mcp.json").read_bytes()
    assert cli("build", "specs", "--out", "out", "--check", cwd=project).exit_code == 0


def test_memo_reuses_models_and_keys_cover_the_schema(project: Path) -> None:
    memo = cache.load_memo(project / "out")
    assert memo.models, "a build keeps its model sources"
    before = dict(memo.models)
    (project / "specs/get_weather.yaml").write_text(
        json.dumps(
            {
                "description": "Current weather for a city",
                "input_schema": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                    "required": ["city"],
                },
            }
        )
    )
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    after = cache.load_memo(project / "out").models
    assert len(set(after) - set(before)) == 1  # only the edited tool's model was generated again
    assert "days" in (project / "out/models/get_weather.py").read_text()


def test_memo_keeps_what_the_specs_now_use_and_is_not_saved_again_unchanged(
    project: Path,
) -> None:
    """Each spec's passed checks stay in the memo while the spec is unchanged (a later edit of
    its description need not check its schema again); the checks of a schema edited away
    leave it; a build that leaves the memo as it was does not write it again."""
    memo_file = project / "out/.toolnexus-gen.cache/memo.json"
    cold = set(cache.load_memo(project / "out").valid)
    spec = project / "specs/forecast.yaml"
    import yaml

    data = yaml.safe_load(spec.read_text())
    data["input_schema"]["properties"]["days"] = {"type": "integer"}
    spec.write_text(json.dumps(data))
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    edited = set(cache.load_memo(project / "out").valid)
    assert len(cold - edited) == 2 and len(edited - cold) == 2  # schema and examples, replaced
    assert len(edited) == len(cold)  # every other spec's checks kept
    mtime = memo_file.stat().st_mtime_ns
    data["description"] = "Forecast, described anew"
    spec.write_text(json.dumps(data))
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    assert memo_file.stat().st_mtime_ns == mtime  # nothing in it changed: not written again
    assert set(cache.load_memo(project / "out").valid) == edited
    assert generated(project / "out") == reference(project)


def test_memo_json_keeps_the_lines_of_the_models_it_still_holds(project: Path) -> None:
    """memo.json has each model source on a line of its own: a build that makes one model
    again keeps the other models' lines as they were; a memo.json laid out otherwise (one
    line, as json.dumps writes it) is read all the same, and written again line by line."""
    memo_file = project / "out/.toolnexus-gen.cache/memo.json"

    def model_lines() -> list[bytes]:  # after the checksum's line and the document's first
        return [line.rstrip(b",") for line in memo_file.read_bytes().split(b"\n")[2:-1]]

    before = model_lines()
    memo = cache.load_memo(project / "out")
    count = len(memo.models)  # the three tools' models and the model modules' header
    assert len(before) == len(memo.lines) == count == 4
    (project / "specs/now.yaml").write_text(
        json.dumps(
            {
                "description": "Now",
                "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}},
            }
        )
    )
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    after = model_lines()
    assert len(after) == count and len(set(before) & set(after)) == count - 1  # now's is new
    assert generated(project / "out") == reference(project)

    body = json.loads(memo_file.read_bytes().partition(b"\n")[2])
    text = json.dumps(body).encode()  # one line
    memo_file.write_bytes(cache.sha(text).encode() + b"\n" + text)
    memo = cache.load_memo(project / "out")
    assert memo.models == body["models"] and not memo.lines
    (project / "specs/now.yaml").write_text("description: Current time\n")
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    assert len(model_lines()) == count
    assert generated(project / "out") == reference(project)


@pytest.mark.parametrize("spec_changed", [False, True])
def test_a_killed_builds_cache_temporary_files_are_removed_by_the_next_build(
    project: Path, spec_changed: bool
) -> None:
    # A build killed while saving its cache leaves `.<name>.<pid>.tnx-tmp` beside the cache
    # files; the next build (a no-op or a real one) must clean it up, and `--check` must not.
    folder = project / "out" / cache.CACHE_DIR
    leftovers = [
        folder / f".{name}.99999.tnx-tmp" for name in (cache.STATE, cache.UNITS, cache.MEMO)
    ]
    for path in leftovers:
        path.write_bytes(b"half a cache file")
    assert cli("build", "specs", "--out", "out", "--check", cwd=project).exit_code == 0
    assert all(path.exists() for path in leftovers), "--check writes and deletes nothing"
    if spec_changed:
        (project / "specs/now.yaml").write_text("description: Current time, changed\n")
    assert cli("build", "specs", "--out", "out", cwd=project).exit_code == 0
    assert not [path for path in leftovers if path.exists()]
    assert not uses_pipeline(project), "the build after the clean-up is a no-op again"
    assert generated(project / "out") == reference(project)


def build_spied(project: Path) -> tuple[list[int], bool, bool]:
    """A build in a fresh process: the worker counts asked of pool_for, and whether
    datamodel-code-generator and jinja2 were imported."""
    code = (
        "import sys\nfrom toolnexus_gen import parallel\n"
        "import toolnexus_gen.pipeline.workers as workers\nasked = []\n"
        "def spy(items, *a, **k):\n    asked.append(items)\n    return parallel.pool_for(items, *a, **k)\n"
        "workers.pool_for = spy\nfrom toolnexus_gen.cli import main\n"
        "sys.argv = ['toolnexus-gen', 'build', 'specs', '--out', 'out', '-q']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(asked, 'datamodel_code_generator' in sys.modules, 'jinja2' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    asked, dmcg, jinja = done.stdout.rsplit(" ", 2)
    return json.loads(asked), dmcg == "True", jinja.strip() == "True"


@pytest.mark.parametrize(
    "edit", ["description", "examples", "title", "annotations", "strict", "targets", "x-note"]
)
def test_an_edit_that_changes_no_model_starts_no_model_generator(project: Path, edit: str) -> None:
    path = project / "specs" / "forecast.yaml"
    import yaml

    data = yaml.safe_load(path.read_text())
    data.update(
        {
            "description": {"description": "Forecast for the coming days"},
            "examples": {"examples": [{"city": "Rome"}]},
            "title": {"title": "Forecast"},
            "annotations": {"annotations": {"readOnlyHint": True}},
            "strict": {"strict": False},
            "targets": {"targets": {"exclude": ["bedrock"]}},
            "x-note": {"x-note": "ours"},
        }[edit]
    )
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    asked, dmcg, jinja = build_spied(project)
    assert asked == [0] and not dmcg, (asked, dmcg)
    assert not jinja or edit == "targets"  # a target change renders dispatch.py again
    assert generated(project / "out") == reference(project)


def test_a_schema_edit_still_starts_the_model_generator(project: Path) -> None:
    path = project / "specs" / "forecast.yaml"
    path.write_text(
        path.read_text().replace("required: [city]", "required: [city, units]")
        if "required: [city]" in path.read_text()
        else path.read_text().replace("- city\n", "- city\n  - units\n", 1)
    )
    asked, _, _ = build_spied(project)
    assert asked == [1]
    assert generated(project / "out") == reference(project)


def test_check_after_an_edit_reuses_no_entry_of_a_file_changed_under_the_same_stat(
    project: Path,
) -> None:
    """A build takes the entries of unchanged specs back from the provider files while their
    size and mtime are the recorded ones; `--check` hashes them, so a file edited under the
    same stat is found changed, whatever else changed."""
    path = project / "out/schemas/mcp.json"
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Current", b"Cxrrent"))  # same size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime
    (project / "specs/forecast.yaml").write_text(
        (project / "specs/forecast.yaml").read_text().replace("Forecast", "Forecast, edited")
    )
    result = cli("build", "specs", "--out", "out", "--check", cwd=project)
    assert result.exit_code == 1
    removed = [line for line in result.stderr.splitlines() if line.startswith("-")]
    assert any("Cxrrent" in line for line in removed), result.stderr


IMPORTED = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://pets.example.com"}],
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "summary": "List pets",
                "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}},
            },
            "post": {
                "operationId": "addPet",
                "summary": "Add a pet",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"],
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            },
        }
    },
}


def build_after_import(project: Path) -> tuple[int, bool]:
    """A plain `build` in a fresh process: how many worker pools it opened, and whether its own
    process imported datamodel-code-generator."""
    code = (
        "import sys\nimport multiprocessing.pool as mp\nopened = []\n"
        "init = mp.Pool.__init__\n"
        "def spy(self, *a, **k):\n    opened.append(1)\n    init(self, *a, **k)\n"
        "mp.Pool.__init__ = spy\nfrom toolnexus_gen.cli import main\n"
        "sys.argv = ['toolnexus-gen', 'build', '-q']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(len(opened), 'datamodel_code_generator' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

    opened, dmcg = done.stdout.split()
    return int(opened), dmcg == "True"


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    root = tmp_path / "imported"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")
    (root / "pets.json").write_text(json.dumps(IMPORTED))
    assert cli("import", "openapi", "pets.json", cwd=root).exit_code == 0
    assert (root / "tools/.toolnexus-gen.cache/memo.json").is_file(), "the import's models"
    return root


def test_a_first_build_whose_memo_holds_every_model_starts_no_model_generator(
    imported: Path,
) -> None:
    """A first build (no record of a last one) that finds a memo holding every model opens no
    worker (one would only import datamodel-code-generator for nothing) and makes none itself."""
    assert cli("build", "-q", cwd=imported).exit_code == 0  # the models, into the memo
    (imported / "tools/.toolnexus-gen.cache/units.json").unlink()  # no record: a first build
    assert build_after_import(imported) == (0, False)
    models = sorted(p.name for p in (imported / "tools/models").glob("*.py"))
    assert "addpet.py" in models and "listpets.py" in models, models


def test_a_model_the_imports_memo_lacks_is_made_on_a_worker_opened_for_it(
    imported: Path,
) -> None:
    spec = next((imported / "specs").glob("addPet*"))
    text = spec.read_text()
    spec.write_text(
        text.replace(
            "        name:\n", "        nickname:\n          type: string\n        name:\n"
        )
    )
    assert "nickname" in spec.read_text()
    opened, _ = build_after_import(imported)
    assert opened == 1
    assert "nickname" in (imported / "tools/models/addpet.py").read_text()


@pytest.mark.parametrize("asked", [["--version"], ["--help"], ["build", "--help"]])
def test_version_and_help_import_no_command(tmp_path: Path, asked: list[str]) -> None:
    """`--version` and `--help` answer from the command line's own module: the commands'
    session (and all it imports) is imported only when a command runs."""
    imported, out = imports_in_fresh_process(tmp_path, asked, "toolnexus_gen.session")
    assert not imported, out
    assert out.split()[-1] == "0", out
    assert out.startswith("toolnexus-gen, version " if asked == ["--version"] else "Usage:")
