"""`import openapi` on what real documents hold: no servers, protocol-relative servers, a user
and password in a server URL, a page `token` beside a bearer scheme, operationIds that differ
only in case, a shared body that skips several operations, object-valued headers, and an
Authorization parameter without a security scheme. Each test failed before its fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from conftest import cli

OK = {"200": {"description": "ok"}}


def document(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Faults", "version": "1"},
        "servers": [{"url": "https://api.example/v1"}],
        "paths": paths,
    }
    doc.update(extra)
    return doc


def get(operation_id: str, *parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "get": {
            "operationId": operation_id,
            "parameters": list(parameters),
            "responses": OK,
            **extra,
        }
    }


def param(name: str, place: str, schema: Any = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": place, "schema": schema or {"type": "string"}, **extra}


def run_import(tmp_path: Path, doc: dict[str, Any]) -> Any:
    (tmp_path / "doc.json").write_text(json.dumps(doc, indent=2))
    return cli("import", "openapi", "doc.json", cwd=tmp_path)


def spec(tmp_path: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((tmp_path / "specs" / f"{name}.yaml").read_text())
    return data


def test_a_document_without_servers_is_one_error_at_build_not_a_cascade(tmp_path: Path) -> None:
    paths = {f"/things{i}": get(f"list{i}", tags=[f"tag{i % 3}"]) for i in range(130)}
    doc = document(paths)
    del doc["servers"]
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    assert "the document's server is not given: set base_url" in result.stderr
    assert "toolsets added to pyproject.toml" in result.stderr  # 130 tools: one per tag
    built = cli("build", cwd=tmp_path)
    assert built.exit_code == 2
    errors = [line for line in built.stderr.splitlines() if " error[" in line]
    assert len(errors) == 1, built.stderr
    assert "error[TN441]" in errors[0] and "no base_url" in errors[0]
    assert "so are the URLs of 129 more specs" in errors[0]
    assert "TN460" not in built.stderr  # its toolsets are not wrong: its specs did not build
    text = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(
        text.replace(
            "[tool.toolnexus-gen.toolsets",
            '[tool.toolnexus-gen]\nbase_url = "https://api.example"\n\n[tool.toolnexus-gen.toolsets',
            1,
        )
    )
    again = cli("build", "--target", "openai", cwd=tmp_path)
    assert again.exit_code == 0, again.stderr


def test_a_protocol_relative_server_is_https_on_its_own_host(tmp_path: Path) -> None:
    doc = document({"/scores": get("scores")}, servers=[{"url": "//stats.example/api/"}])
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    http = spec(tmp_path, "scores")["http"]
    assert (http["base_url"], http["url"]) == ("https://stats.example/api", "/scores")
    assert "names no scheme: its tools call https://stats.example/api/" in result.stderr
    assert "base_url" not in result.stderr.split("names no scheme")[0]  # no base_url asked for


def test_a_user_and_password_in_the_server_url_never_reach_a_file(tmp_path: Path) -> None:
    doc = document(
        {"/a": get("a"), "/b": get("b")},
        servers=[{"url": "https://admin:hunter2-secret@api.example/v1"}],
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    written = "".join(p.read_text() for p in (tmp_path / "specs").rglob("*.yaml"))
    assert "hunter2" not in written and "admin" not in written
    http = spec(tmp_path, "a")["http"]
    assert http["base_url"] == "https://api.example/v1"
    assert http["headers"] == {"Authorization": "Basic ${TOOLNEXUS_FAULTS_SERVER_LOGIN}"}
    assert result.stderr.count("warning[TN455]") == 1  # once, not once per operation
    assert "hunter2" not in result.output + result.stderr
    assert "TOOLNEXUS_FAULTS_SERVER_LOGIN: the server URL's user:password" in result.output
    # the build takes it, and dispatch.py holds only the variable's name
    built = cli("build", "--target", "openai", "--out", "faults_tools", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr
    assert "hunter2" not in (tmp_path / "faults_tools" / "dispatch.py").read_text()


def test_a_page_token_of_a_bearer_secured_api_stays_an_argument(tmp_path: Path) -> None:
    doc = document(
        {"/rules": get("listRules", param("token", "query"), param("limit", "query"))},
        security=[{"bearer": []}],
        components={"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    listed = spec(tmp_path, "listRules")
    assert list(listed["input_schema"]["properties"]) == ["token", "limit"]
    assert listed["http"]["headers"] == {"Authorization": "Bearer ${TOOLNEXUS_FAULTS_BEARER}"}
    assert "carries a credential" not in result.stderr


def test_operation_ids_that_differ_only_in_case_get_distinct_names(tmp_path: Path) -> None:
    doc = document(
        {"/rules": get("List Rules"), "/rules/all": get("List rules"), "/x": get("list_rules")}
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    names = sorted(p.stem for p in (tmp_path / "specs").glob("*.yaml"))
    assert names == ["List_Rules", "List_rules_2", "list_rules_3"]
    assert spec(tmp_path, "List_rules_2")["http"]["url"] == "/rules/all"
    assert "imported as 'List_rules_2'" in result.stderr
    assert "left out" not in result.stderr and "TN415" not in result.stderr
    built = cli("build", "--target", "openai", "--out", "rules_tools", cwd=tmp_path)
    assert built.exit_code == 0, built.stderr


def test_a_shared_body_names_every_operation_it_skips(tmp_path: Path) -> None:
    upload = {"$ref": "#/components/requestBodies/Upload"}
    doc = document(
        {
            "/files": {"post": {"operationId": "addFile", "requestBody": upload, "responses": OK}},
            "/images": {
                "post": {"operationId": "addImage", "requestBody": upload, "responses": OK}
            },
            "/ok": get("ok"),
        },
        components={
            "requestBodies": {
                "Upload": {
                    "required": True,
                    # a media range: no one type to send it as (TN471)
                    "content": {"image/*": {"schema": {"type": "string", "format": "binary"}}},
                }
            }
        },
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning[TN471]" in line]
    assert len(warnings) == 1, result.stderr
    assert "(2 operations skipped: addFile (POST /files), addImage (POST /images))" in warnings[0]


def test_an_object_valued_header_is_left_out_with_a_note(tmp_path: Path) -> None:
    shape = {"type": "object", "properties": {"r": {"type": "integer"}}}
    doc = document(
        {"/a": get("a", param("X-Shape", "header", shape, required=True), param("q", "query"))}
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    imported = spec(tmp_path, "a")
    assert list(imported["input_schema"]["properties"]) == ["q"]
    assert "headers" not in imported["http"]
    assert "a: header parameter 'X-Shape' takes an object; left out (required" in result.stderr


def test_tools_that_will_send_no_credentials_are_said(tmp_path: Path) -> None:
    doc = document(
        {
            "/me": get("me", param("Authorization", "header", required=True)),
            "/keyed": get("keyed", param("api_key", "query")),
            "/open": get("open"),
        }
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    assert (
        "note: 2 tool(s) will send no credentials (me, keyed): their parameters carry one"
        in result.stderr
    )
    assert "the document declares no security scheme" in result.stderr
    assert "headers" not in spec(tmp_path, "me")["http"]
    # with a scheme the import carries, nothing is said
    secured = document(
        {"/me": get("me", param("Authorization", "header"))},
        security=[{"bearer": []}],
        components={"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    )
    (tmp_path / "s").mkdir()
    again = run_import(tmp_path / "s", secured)
    assert again.exit_code == 0 and "send no credentials" not in again.stderr


def test_each_servers_login_has_its_own_variable_never_a_schemes(tmp_path: Path) -> None:
    doc = document(
        {
            "/a": get("a", servers=[{"url": "https://u1:first-password@a.example"}]),
            "/b": get("b", servers=[{"url": "https://u2:second-password@b.example"}]),
            "/c": get("c", security=[{"serverLogin": []}]),
        },
        # a scheme whose variable would be the login's: the login takes another name
        components={
            "securitySchemes": {"serverLogin": {"type": "apiKey", "in": "header", "name": "X-K"}}
        },
        servers=[{"url": "https://u1:first-password@a.example"}],
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    first = spec(tmp_path, "a")["http"]["headers"]["Authorization"]
    second = spec(tmp_path, "b")["http"]["headers"]["Authorization"]
    assert first == "Basic ${TOOLNEXUS_FAULTS_SERVER_LOGIN_2}"
    assert second == "Basic ${TOOLNEXUS_FAULTS_SERVER_LOGIN_3}"
    assert spec(tmp_path, "c")["http"]["headers"] == {
        "X-K": "${TOOLNEXUS_FAULTS_SERVER_LOGIN}",  # the scheme's own variable
        "Authorization": "Basic ${TOOLNEXUS_FAULTS_SERVER_LOGIN_2}",  # a.example's login
    }
    assert "password" not in "".join(p.read_text() for p in (tmp_path / "specs").rglob("*"))


def test_a_server_url_that_is_no_url_is_located_not_a_traceback(tmp_path: Path) -> None:
    doc = document({"/a": get("a")}, servers=[{"url": "https://[abc/x"}])
    result = run_import(tmp_path, doc)
    assert result.exit_code == 2
    assert "error[TN450]: server url 'https://[abc/x' is not a URL" in result.stderr
    assert not (tmp_path / "specs").exists()
    (tmp_path / "doc.json").write_text(json.dumps(document({"/a": get("a")})))
    flag = cli("import", "openapi", "doc.json", "--server", "https://[x", cwd=tmp_path)
    assert flag.exit_code == 2 and "--server 'https://[x' must be an absolute" in flag.stderr


def test_a_document_of_webhooks_only_is_refused_saying_so(tmp_path: Path) -> None:
    # as Adyen's notification documents in the public API directory are written (OpenAPI 3.1)
    hook = {"post": {"operationId": "balanceReport", "responses": OK}}
    doc = document({}, openapi="3.1.0", webhooks={"report": hook, "payment": hook})
    del doc["paths"]
    result = run_import(tmp_path, doc)
    assert result.exit_code == 2, result.output
    assert "doc.json:" in result.stderr and "error[TN450]" in result.stderr
    assert "its 2 webhooks are requests the API sends, not operations a tool calls" in result.stderr
    assert not (tmp_path / "specs").exists()


def test_a_map_of_examples_in_a_schema_is_left_out_not_the_operation(tmp_path: Path) -> None:
    examples = {"small": {"summary": "a small one", "value": {"r": 1}}}
    body = {"type": "object", "properties": {"r": {"type": "integer"}}, "examples": examples}
    doc = document(
        {
            "/a": {
                "post": {
                    "operationId": "make",
                    "requestBody": {"content": {"application/json": {"schema": body}}},
                    "responses": OK,
                }
            }
        }
    )
    result = run_import(tmp_path, doc)
    assert result.exit_code == 0, result.stderr
    made = spec(tmp_path, "make")
    assert made["input_schema"]["properties"]["r"] == {"type": "integer"}
    assert "examples" not in made["input_schema"]
    assert "examples: not an array of examples (a map of Example Objects?): left out" in (
        result.stderr
    )
