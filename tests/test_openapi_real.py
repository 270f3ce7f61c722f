"""Real OpenAPI documents, as their providers publish them, import and build for all six targets:
DigitalOcean's multi-file layout (a subset kept in tests/fixtures/openapi/digitalocean, every
operation a $ref to its own file) and Slack in `make test`; GitHub (13 MB), Stripe, Box, Jira,
DigitalOcean (bundled), Spotify, Twilio, OpenAI and Kubernetes, fetched from the npm registry
(tests/openapi_documents.py), behind the soak marker (`make test-all`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, cli
from openapi_documents import document
from rest_server import Answer, serving
from runtime_only import run as run_runtime_only
from sdk_check import assert_accepted
from test_openapi import load_package

FIXTURES = ROOT / "tests" / "fixtures" / "openapi"
# default settings: an import carries what each provider needs (`profile: reach` per spec)
SETTINGS = '[project]\nname = "p"\nversion = "0"\n[tool.toolnexus-gen]\n'
TARGETS = {"gemini", "openai", "openai_responses", "anthropic", "mcp", "bedrock"}


def import_and_build(project: Path, source: Path, package: str) -> tuple[Any, Any]:
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(SETTINGS)
    imported = cli("import", "openapi", str(source), "--specs", "specs", cwd=project)
    assert imported.exit_code == 0, imported.stderr
    built = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", package],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert " error[" not in built.stderr
    return imported, built


def provider_files(out: Path) -> dict[str, Any]:
    files = {p.stem: json.loads(p.read_text()) for p in (out / "schemas").glob("*.json")}
    assert TARGETS <= set(files)
    return files


@pytest.fixture(scope="module")
def digitalocean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    project = tmp_path_factory.mktemp("digitalocean")
    source = FIXTURES / "digitalocean" / "DigitalOcean-public.v2.yaml"
    imported, _ = import_and_build(project, source, "do_tools")
    return project, imported


def test_digitalocean_multi_file_layout_imports_every_operation(
    digitalocean: tuple[Path, Any],
) -> None:
    # every operation is `get: {$ref: resources/.../x.yml}`: read as nothing, it gave empty
    # tools and exit 0
    tmp_path, imported = digitalocean
    specs = {p.stem: yaml.safe_load(p.read_text()) for p in (tmp_path / "specs").glob("*.yaml")}
    assert len(specs) == 11 and "11 specs imported" in imported.output
    create = specs["sshKeys_create"]  # from resources/ssh_keys/sshKeys_create.yml
    assert create["description"].startswith("Create a New SSH Key")
    assert create["input_schema"]["required"] == ["public_key", "name"]
    # id is readOnly in resources/ssh_keys/attributes/ssh_key_id.yml: not a request argument
    assert list(create["input_schema"]["properties"]) == ["public_key", "name"]
    assert create["input_schema"]["properties"]["name"] == {
        "$ref": "_digitalocean/ssh_key_name.json"
    }
    assert create["groups"] == ["SSH_Keys"]
    get = specs["sshKeys_get"]
    assert get["http"]["url"] == "/v2/account/keys/{ssh_key_identifier}"
    assert get["input_schema"]["properties"]["ssh_key_identifier"]["anyOf"] == [
        {"$ref": "_digitalocean/ssh_key_id.json"},
        {"$ref": "_digitalocean/ssh_key_fingerprint.json"},
    ]
    assert all(
        spec.get("input_schema") or spec["http"]["method"] == "GET" for spec in specs.values()
    )
    files = provider_files(tmp_path / "do_tools")
    assert_accepted(files)
    assert len(files["openai"]) == 11
    pkg = load_package(tmp_path, "do_tools")
    with serving() as server:
        server.route("GET", "/v2/account/keys/512189", Answer(200, {"ssh_key": {"id": 512189}}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        os.environ["TOOLNEXUS_DIGITALOCEAN_BEARER_AUTH"] = "dop_v1_example_token"
        try:
            result = tk.execute_sync("sshKeys_get", {"ssh_key_identifier": 512189})
        finally:
            del os.environ["TOOLNEXUS_DIGITALOCEAN_BEARER_AUTH"]
        tk.close()
    assert result.data == {"ssh_key": {"id": 512189}}, result.output
    (seen,) = server.seen
    assert seen.headers["Authorization"] == "Bearer dop_v1_example_token"


def test_the_generated_package_type_checks_and_lints(digitalocean: tuple[Path, Any]) -> None:
    tmp_path, _ = digitalocean
    for command in (
        [sys.executable, "-m", "mypy", "--strict", "do_tools"],
        [sys.executable, "-m", "ruff", "check", "do_tools"],
    ):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


# Slack's whole document (about 30 s): soak; DigitalOcean's layout stays in make test
@pytest.mark.soak
def test_slack_credentials_groups_and_toolsets(tmp_path: Path) -> None:
    # Slack's methods declare `token` as a header parameter beside their OAuth scheme: it was a
    # model argument; 174 operations fail TN330 without toolsets: tags now give them
    (tmp_path / "pyproject.toml").write_text(SETTINGS)
    result = cli("import", "openapi", str(document("slack")), cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    post = yaml.safe_load((tmp_path / "specs" / "chat_postMessage.yaml").read_text())
    assert "token" not in post["input_schema"]["properties"]
    assert post["http"]["headers"] == {"Authorization": "Bearer ${TOOLNEXUS_SLACK_WEB_SLACK_AUTH}"}
    assert post["groups"] == ["chat"]
    assert "header parameter 'token' carries a credential" in result.stderr
    config = (tmp_path / "pyproject.toml").read_text()
    assert config.startswith(SETTINGS)  # appended to, never rewritten
    assert '[tool.toolnexus-gen.toolsets.chat]\ngroups = ["chat"]' in config
    assert "toolsets added to pyproject.toml, one per tag" in result.stderr
    # the whole set over OpenAI's 128 is no one tool's fault: every tool goes to every target
    # (it took one tool away from OpenAI per check round, and four rounds for GitHub)
    assert "TN416" not in result.stderr and "TN330" not in result.stderr
    specs = [yaml.safe_load(p.read_text()) for p in (tmp_path / "specs").glob("*.yaml")]
    assert len(specs) == 174 and not [spec["name"] for spec in specs if "targets" in spec]


# -- every registry document, whole: make test-all ---------------------------------------------

REAL: dict[str, int] = {  # document -> tools imported
    "github": 1223,
    "stripe": 451,
    "box": 260,
    "jira": 499,
    "digitalocean": 290,
    "slack": 174,
    "spotify": 88,
    "twilio": 195,
    "openai": 28,  # 5 of them send multipart bodies (file uploads)
    "kubernetes": 845,
}


@pytest.mark.soak
@pytest.mark.parametrize("name", sorted(REAL))
def test_a_real_document_imports_and_builds_for_every_target(name: str, tmp_path: Path) -> None:
    imported, built = import_and_build(tmp_path, document(name), f"{name}_tools")
    specs = list((tmp_path / "specs").glob("*.yaml"))
    assert len(specs) == REAL[name], imported.stderr[-2000:]
    files = provider_files(tmp_path / f"{name}_tools")
    assert len(files["mcp"]) == len(specs)
    assert_accepted(files)
    pkg = load_package(tmp_path, f"{name}_tools")
    assert len(pkg.TOOLS) == len(specs)
    # with only the runtime installed (httpx, its `rest` extra, is imported on the first call)
    code = f"import {name}_tools as p\nprint(len(p.TOOLS))\n"
    ran = run_runtime_only(code, tmp_path, (f"{name}_tools",))
    assert ran.returncode == 0 and ran.stdout.split() == [str(len(specs))], ran.stderr[-2000:]
    for command in (
        [sys.executable, "-m", "mypy", "--strict", f"{name}_tools"],
        [sys.executable, "-m", "ruff", "check", f"{name}_tools"],
        [sys.executable, "-m", "ruff", "format", "--check", f"{name}_tools"],
    ):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
