"""OpenAPI's serialisation styles reach the wire as the document says: a document with a
parameter of every style (Stripe's deepObject, Box's `explode: false` lists, ...) is imported
and built, each tool called against a real server on 127.0.0.1, and the exact request target
and body checked. Credentials named as parameters never become arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from rest_server import Answer, serving
from test_openapi import document, load_package

ANY = {"type": "array", "items": {"type": "string"}}
OBJECT = {"type": "object", "properties": {"r": {"type": "integer"}, "g": {"type": "integer"}}}


def param(name: str, place: str, schema: dict[str, Any], **style: Any) -> dict[str, Any]:
    return {"name": name, "in": place, "schema": schema, **style}


def operation(op_id: str, *params: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"operationId": op_id, "parameters": list(params), "responses": {}, **extra}


STYLES_DOC = document(
    "3.1.0",
    paths={
        "/form": {
            "get": operation(
                "formStyles",
                param("ids", "query", ANY),  # form, exploded: the default
                param("fields", "query", ANY, explode=False),  # Box: fields=a,b
                param("color", "query", OBJECT),  # form exploded object: its keys
                param("rgb", "query", OBJECT, explode=False),
                param("space", "query", ANY, style="spaceDelimited", explode=False),
                param("pipe", "query", ANY, style="pipeDelimited", explode=False),
                # Twilio: a name Anthropic refuses as a property key: an alias on our side
                param("StartTime<", "query", {"type": "string"}),
            )
        },
        "/deep": {
            "get": operation(
                "deepStyles",
                # Stripe: created[gte]=1&expand[0]=a and nested objects
                param("created", "query", OBJECT, style="deepObject", explode=True),
                param("expand", "query", ANY, style="deepObject", explode=True),
                param("filter", "query", {"type": "object"}, style="deepObject", explode=True),
                {"name": "q", "in": "query", "content": {"application/json": {"schema": OBJECT}}},
            )
        },
        "/items/{id}/{tags}": {
            "get": operation(
                "pathStyles",
                param("id", "path", {"type": "integer"}, required=True, style="label"),
                param("tags", "path", {"type": "string"}, required=True, style="matrix"),
                param("X-Ids", "header", ANY),
                param("X-Obj", "header", OBJECT, explode=True),
            )
        },
        # values as the model wrote them: pydantic would send "https://example.com/" (AnyUrl's
        # slash), 1.0 for a number written 1, "...Z" for a date-time written "+00:00"
        "/written": {
            "get": operation(
                "writtenQuery",
                param("site", "query", {"type": "string", "format": "uri"}),
                param("ratio", "query", {"type": "number"}),
                param("since", "query", {"type": "string", "format": "date-time"}),
            ),
            "post": operation(
                "writtenBody",
                requestBody={
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "site": {"type": "string", "format": "uri"},
                                    "ratio": {"type": "number"},
                                    "since": {"type": "string", "format": "date-time"},
                                    "links": {
                                        "type": "array",
                                        "items": {"type": "string", "format": "uri"},
                                    },
                                },
                            }
                        }
                    },
                },
            ),
        },
        "/customers": {
            "post": operation(
                "formBody",
                requestBody={
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "metadata": {"type": "object"},
                                    "items": {"type": "array", "items": OBJECT},
                                    "tax_ids": ANY,
                                    "card": OBJECT,
                                    "flags": ANY,
                                },
                            },
                            "encoding": {  # as Stripe writes it
                                "metadata": {"style": "deepObject", "explode": True},
                                "items": {"style": "deepObject", "explode": True},
                                "card": {"contentType": "application/json"},
                                "flags": {"style": "form", "explode": False},
                            },
                        }
                    },
                },
            )
        },
    },
)


@pytest.fixture(scope="module")
def styles_package(tmp_path_factory: pytest.TempPathFactory) -> Any:
    project = tmp_path_factory.mktemp("styles")
    (project / "doc.json").write_text(json.dumps(STYLES_DOC))
    (project / "pyproject.toml").write_text("[tool.toolnexus-gen]\n")  # default settings
    result = cli("import", "openapi", "doc.json", "--specs", "specs", cwd=project)
    assert result.exit_code == 0, result.stderr
    built = cli("build", "specs", "--out", "styles_tools", cwd=project)
    assert built.exit_code == 0, built.stderr
    return load_package(project, "styles_tools")


def call(pkg: Any, tool: str, args: dict[str, Any], method: str, path: str) -> Any:
    with serving() as server:
        server.route(method, path, Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        result = tk.execute_sync(tool, args)
        tk.close()
    assert not result.is_error, result.output
    (seen,) = server.seen
    return seen


def test_query_styles_as_the_document_says(styles_package: Any) -> None:
    args = {
        "ids": ["a", "b"],
        "fields": ["id", "name"],
        "color": {"r": 1, "g": 2},
        "rgb": {"r": 1, "g": 2},
        "space": ["x y", "z"],
        "pipe": ["p", "q"],
        "StartTime_lt": "2024-01-01",
    }
    seen = call(styles_package, "formStyles", args, "GET", "/form")
    assert seen.target == (
        "/form?ids=a&ids=b&fields=id,name&r=1&g=2&rgb=r,1,g,2&space=x%20y%20z&pipe=p|q"
        "&StartTime%3C=2024-01-01"
    )


def test_deep_objects_as_stripe_reads_them(styles_package: Any) -> None:
    args = {
        "created": {"r": 1, "g": 2},
        "expand": ["data.customer", "data.invoice"],
        "filter": {"a": {"b": ["c", "d"]}, "e": None},
        "q": {"r": 5},
    }
    seen = call(styles_package, "deepStyles", args, "GET", "/deep")
    assert seen.target == (
        "/deep?created%5Br%5D=1&created%5Bg%5D=2"
        "&expand%5B0%5D=data.customer&expand%5B1%5D=data.invoice"
        "&filter%5Ba%5D%5Bb%5D%5B0%5D=c&filter%5Ba%5D%5Bb%5D%5B1%5D=d"
        "&q=%7B%22r%22%3A5%7D"
    )
    assert seen.query[:2] == [("created[r]", "1"), ("created[g]", "2")]


def test_path_and_header_styles(styles_package: Any) -> None:
    args = {"id": 5, "tags": "blue", "X-Ids": ["a", "b"]}
    seen = call(styles_package, "pathStyles", args, "GET", "/items/.5/;tags=blue")
    assert seen.target == "/items/.5/;tags=blue"
    assert seen.headers["X-Ids"] == "a,b"
    # an object-valued header is left out at import (said in a note): no argument, no header
    assert "X-Obj" not in seen.headers
    fields = styles_package.PathStylesArgs.model_fields.values()
    assert "X-Obj" not in {field.alias for field in fields}


def test_a_form_body_as_its_encoding_says(styles_package: Any) -> None:
    args = {
        "name": "Ada",
        "metadata": {"plan": "pro"},
        "items": [{"r": 1}, {"r": 2, "g": 3}],
        "tax_ids": ["t1", "t2"],
        "card": {"r": 9},
        "flags": ["x", "y"],
    }
    seen = call(styles_package, "formBody", args, "POST", "/customers")
    assert seen.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert seen.body.decode() == (
        "name=Ada&metadata%5Bplan%5D=pro&items%5B0%5D%5Br%5D=1&items%5B1%5D%5Br%5D=2"
        "&items%5B1%5D%5Bg%5D=3&tax_ids=t1&tax_ids=t2&card=%7B%22r%22%3A9%7D&flags=x,y"
    )


WRITTEN = {"site": "https://example.com", "ratio": 1, "since": "2024-05-01T10:00:00+00:00"}


def test_query_values_are_sent_as_the_model_wrote_them(styles_package: Any) -> None:
    seen = call(styles_package, "writtenQuery", dict(WRITTEN), "GET", "/written")
    assert seen.target == (
        "/written?site=https%3A%2F%2Fexample.com&ratio=1&since=2024-05-01T10%3A00%3A00%2B00%3A00"
    )


def test_body_values_are_sent_as_the_model_wrote_them(styles_package: Any) -> None:
    args = {**WRITTEN, "links": ["https://a.example", "http://b.example/x"]}
    seen = call(styles_package, "writtenBody", args, "POST", "/written")
    # byte for byte (1 stays 1, not 1.0; no value here holds a space)
    assert seen.body.replace(b" ", b"") == json.dumps(args, separators=(",", ":")).encode()
    # what the model got wrong is still refused before anything is sent
    with serving() as server:
        tk = styles_package.Toolkit(styles_package.ToolHandlers(), base_url=server.url)
        result = tk.execute_sync("writtenBody", {"ratio": "many"})
        tk.close()
    assert result.is_error and result.error_type == "invalid_arguments"
    assert server.seen == []


def test_the_binding_says_each_style(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text(json.dumps(STYLES_DOC))
    assert cli("import", "openapi", "doc.json", cwd=tmp_path).exit_code == 0
    import yaml

    form = yaml.safe_load((tmp_path / "specs" / "formStyles.yaml").read_text())
    assert form["http"]["styles"] == {
        "ids": {"style": "form", "explode": True},
        "fields": {"style": "form", "explode": False},
        "color": {"style": "form", "explode": True},
        "rgb": {"style": "form", "explode": False},
        "space": {"style": "spaceDelimited", "explode": False},
        "pipe": {"style": "pipeDelimited", "explode": False},
    }
    body = yaml.safe_load((tmp_path / "specs" / "formBody.yaml").read_text())
    assert body["http"]["encoding"]["card"] == {"style": "json"}


def test_credentials_are_never_arguments(tmp_path: Path) -> None:
    # Slack's methods declare the token as a header parameter besides their OAuth scheme;
    # a query api_key or X-Api-Key header is a credential by its name
    doc = document(
        security=[{"slackAuth": []}],
        components={
            "securitySchemes": {
                "slackAuth": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://x.test",
                            "tokenUrl": "https://x.test",
                            "scopes": {},
                        }
                    },
                },
                "query_key": {"type": "apiKey", "in": "query", "name": "sig"},
            }
        },
        paths={
            "/chat.postMessage": {
                "post": operation(
                    "chat_postMessage",
                    param("token", "header", {"type": "string"}, required=True),
                    param("api_key", "query", {"type": "string"}),
                    param("X-Api-Key", "header", {"type": "string"}),
                    param("sig", "query", {"type": "string"}),
                    param("channel", "query", {"type": "string"}),
                )
            }
        },
    )
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    result = cli("import", "openapi", "doc.json", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    import yaml

    spec = yaml.safe_load((tmp_path / "specs" / "chat_postMessage.yaml").read_text())
    assert list(spec["input_schema"]["properties"]) == ["channel"]
    assert spec["http"]["headers"] == {"Authorization": "Bearer ${TOOLNEXUS_T_SLACK_AUTH}"}
    for name in ("token", "api_key", "X-Api-Key", "sig"):
        assert f"parameter {name!r} carries a credential: it is no argument for a model" in (
            result.stderr
        )
