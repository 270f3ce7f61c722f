"""Requests as the document says, and no argument a tool does not declare.

- A JSON body whose media type is a `+json` one (JSON Merge Patch, JSON Patch, JSON:API) is sent
  with that Content-Type (servers of those answer 415 to application/json); the binding's
  `content_type` carries it, and the build refuses one a header could be abused through.
- Arguments a tool does not declare are an invalid-arguments result naming each and the
  closest declared name, and nothing is sent or run, for every kind of tool (handler, REST,
  MCP proxy, built-in), unless its schema allows other properties explicitly; so is a key
  inside an argument that its object does not declare, for the tools whose call is sent on
  (REST, MCP, curated).
Each test failed before the change it covers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import build_in, cli, write_specs
from rest_server import Answer, serving

ITEM = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}


def openapi(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Shop", "version": "1"},
        "servers": [{"url": "https://shop.example"}],
        "paths": paths,
    }
    doc.update(extra)
    return doc


def body_of(media: str, schema: Any, operation_id: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "requestBody": {"required": True, "content": {media: {"schema": schema}}},
        "responses": {"200": {"description": "ok"}},
    }


def imported_package(tmp_path: Path, doc: dict[str, Any], *extra: str) -> Any:
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    result = cli("import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    specs = {
        p.relative_to(tmp_path / "specs").as_posix(): p.read_text()
        for p in (tmp_path / "specs").rglob("*.json")
    }
    return build_in(tmp_path / "built", specs, *extra)


# -- the body's media type ------------------------------------------------------------------


PATCH_DOC = openapi(
    {
        "/items/{id}": {
            "parameters": [
                {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "patch": body_of("application/merge-patch+json", ITEM, "mergeItem"),
            "post": body_of(
                "application/json-patch+json",
                {"type": "array", "items": {"type": "object"}},
                "patchItem",
            ),
            "put": body_of("application/vnd.api+json; ext=bulk", ITEM, "putItem"),
        }
    }
)


def test_a_json_body_goes_with_the_media_type_the_document_declares(tmp_path: Path) -> None:
    pkg = imported_package(tmp_path, PATCH_DOC)
    with serving() as server:
        for method in ("PATCH", "POST", "PUT"):
            server.route(method, "/items/7", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        merged = tk.execute_sync("mergeItem", {"id": "7", "name": "Bo"})
        patched = tk.execute_sync("patchItem", {"id": "7", "body": [{"op": "remove"}]})
        put = tk.execute_sync("putItem", {"id": "7", "size": 3})
        tk.close()
    assert not merged.is_error and not patched.is_error and not put.is_error, merged.output
    merge, patch, replaced = server.seen
    assert merge.headers["Content-Type"] == "application/merge-patch+json"
    assert merge.json == {"name": "Bo"}
    assert patch.headers["Content-Type"] == "application/json-patch+json"
    assert patch.json == [{"op": "remove"}]
    # JSON:API refuses media type parameters: the type goes without them
    assert replaced.headers["Content-Type"] == "application/vnd.api+json"


def test_the_binding_carries_the_media_type(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text(json.dumps(PATCH_DOC))
    result = cli("import", "openapi", "doc.json", "--as", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    spec = json.loads((tmp_path / "specs" / "mergeItem.json").read_text())
    assert spec["http"]["content_type"] == "application/merge-patch+json"


@pytest.mark.parametrize(
    ("http", "why"),
    [
        ({"method": "PATCH", "content_type": "text/plain"}, "is not a JSON media type"),
        (
            {"method": "PATCH", "content_type": "application/json\r\nX-Admin: 1"},
            "is not a JSON media type",
        ),
        (
            {"method": "PATCH", "content_type": "application/vnd.a+json; x=1"},
            "is not a JSON media type",
        ),
        (
            {"method": "POST", "body": "form", "content_type": "application/merge-patch+json"},
            "this tool's body is form",
        ),
    ],
)
def test_a_media_type_a_header_cannot_carry_as_is_is_refused(
    tmp_path: Path, http: dict[str, Any], why: str
) -> None:
    spec = {
        "description": "Change an item",
        "http": {"url": "https://shop.example/items", **http},
        "input_schema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    write_specs(tmp_path / "specs", {"change.json": spec})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[TN445]" in result.stderr and why in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_hand_made_binding_with_a_bad_media_type_is_refused_at_run_time() -> None:
    from toolnexus_runtime.executors.http import _Call

    binding = {"method": "PATCH", "url": "https://x.example/a", "body": "json"}
    for media in ("application/json\r\nX-Admin: 1", "text/html", 7):
        with pytest.raises(ValueError, match="content_type"):
            _Call.make("t", {**binding, "content_type": media}, None)


# -- arguments a tool does not declare -------------------------------------------------------


CREATE_DOC = openapi(
    {
        "/orders/{shop}": {
            "post": {
                "operationId": "createOrder",
                "parameters": [
                    {"name": "shop", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                # a body that is not a plain object becomes one argument, `body`
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"oneOf": [ITEM, {"type": "array", "items": ITEM}]}
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    }
)


def test_a_rest_call_with_the_bodys_fields_flat_sends_nothing(tmp_path: Path) -> None:
    pkg = imported_package(tmp_path, CREATE_DOC)
    with serving() as server:
        server.route("POST", "/orders/s1", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        flat = tk.execute_sync("createOrder", {"shop": "s1", "name": "Bo", "size": 2})
        typo = tk.execute_sync("createOrder", {"shp": "s1", "body": {"name": "Bo"}})
        right = tk.execute_sync("createOrder", {"shop": "s1", "body": {"name": "Bo"}})
        tk.close()
    assert flat.is_error and flat.error_type == "invalid_arguments"
    assert "name: not an argument of this tool" in flat.output
    assert "size: not an argument of this tool" in flat.output
    assert "the call was not made" in flat.output
    assert typo.is_error and "shp: not an argument of this tool (did you mean 'shop'?" in (
        typo.output
    )
    assert "shop: Field required" in typo.output  # the declared ones' faults too
    assert not right.is_error
    assert [seen.json for seen in server.seen] == [{"name": "Bo"}]  # only the right call


def test_a_handler_tool_with_an_unknown_argument_is_not_run(tmp_path: Path) -> None:
    specs = {
        "get_weather.json": {
            "description": "Weather",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
                "required": ["city"],
            },
        },
        "free_form.json": {
            "description": "Anything goes",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": True,
            },
        },
        "typed_extras.json": {
            "description": "Extras of one type",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": {"type": "integer"},
            },
        },
        "now.json": {"description": "The time"},
    }
    pkg = build_in(tmp_path, specs, "--target", "openai", "--target", "mcp")
    ran: list[str] = []

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def get_weather(self, args: Any, ctx: Any) -> str:
            ran.append("get_weather")
            return "sunny"

        def free_form(self, args: Any, ctx: Any) -> str:
            return json.dumps(args.model_dump())

        def typed_extras(self, args: Any, ctx: Any) -> str:
            return json.dumps(args.model_dump())

        def now(self, args: Any, ctx: Any) -> str:
            ran.append("now")
            return "12:00"

    tk = pkg.Toolkit(Handlers())
    wrong = tk.execute_sync("get_weather", {"city": "Oslo", "unit": "c"})
    assert wrong.is_error and wrong.error_type == "invalid_arguments"
    assert "unit: not an argument of this tool (did you mean 'units'?" in wrong.output
    as_text = tk.execute_sync("get_weather", '{"city": "Oslo", "country": "NO"}')
    assert as_text.is_error and "country: not an argument" in as_text.output
    assert "(its arguments: city, units;" in as_text.output  # none is close: all are named
    none = tk.execute_sync("now", {"tz": "UTC"})
    assert none.is_error and "it takes no arguments" in none.output
    assert ran == []
    # a schema that says so takes other properties
    assert json.loads(tk.execute_sync("free_form", {"city": "a", "x": [1]}).output)["x"] == [1]
    assert not tk.execute_sync("typed_extras", {"city": "a", "n": 2}).is_error
    assert tk.execute_sync("typed_extras", {"city": "a", "n": "two"}).is_error
    assert tk.execute_sync("get_weather", {"city": "Oslo"}).output == "sunny"


def test_a_built_in_tool_with_an_unknown_argument_is_not_run(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toolnexus-gen]\nbuiltins = ["read"]\n')
    (tmp_path / "notes.txt").write_text("hello\n")
    specs = {"noop.json": {"description": "Nothing"}}
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "reading_tools", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    import importlib
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("reading_tools")
    finally:
        sys.path.remove(str(tmp_path))

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def noop(self, args: Any, ctx: Any) -> str:
            return ""

    tk = pkg.Toolkit(Handlers(), workspace=tmp_path)
    wrong = tk.execute_sync("read", {"file": "notes.txt"})
    assert wrong.is_error and wrong.error_type == "invalid_arguments"
    assert "file: not an argument of this tool" in wrong.output
    assert "hello" not in wrong.output
    assert "hello" in tk.execute_sync("read", {"path": "notes.txt"}).output


def test_an_mcp_proxied_tool_with_an_unknown_argument_is_not_sent(tmp_path: Path) -> None:
    from pydantic import BaseModel
    from test_mcp_gateway import counting_server, raw_server, starts
    from toolnexus_runtime import Toolkit, ToolSpec

    class AddArgs(BaseModel):
        a: int
        b: int

    answer = """
    total = request["params"]["arguments"]["a"] + request["params"]["arguments"]["b"]
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text",
          "text": str(total)}]}})
    """
    server = counting_server(
        tmp_path, raw_server([{"name": "add", "inputSchema": {"type": "object"}}], answer)
    )
    table = {"r_add": ToolSpec("r_add", AddArgs, None, {"mcp": {"server": "r", "tool": "add"}})}
    with Toolkit(object(), tools=table, mcp_config={"mcpServers": {"r": server}}) as tk:
        wrong = tk.execute_sync("r_add", {"a": 1, "b": 2, "c": 3})
        assert starts(tmp_path) == 0  # refused before the server was even started
        right = tk.execute_sync("r_add", {"a": 1, "b": 2})
    assert wrong.is_error and "c: not an argument of this tool" in wrong.output
    assert (right.is_error, right.output) == (False, "3")


def test_many_or_long_unknown_names_are_said_within_bounds(tmp_path: Path) -> None:
    specs = {"one.json": {"description": "One", "input_schema": ITEM}}
    pkg = build_in(tmp_path, specs, "--target", "openai")

    class Handlers(pkg.ToolHandlers):  # type: ignore[misc, name-defined]
        def one(self, args: Any, ctx: Any) -> str:
            return "ran"

    tk = pkg.Toolkit(Handlers())
    many = tk.execute_sync("one", {f"extra{i}": i for i in range(500)} | {"x" * 100_000: 1})
    assert many.is_error and "and 491 more arguments this tool does not take" in many.output
    assert len(many.output) < 3_000


@pytest.mark.parametrize(
    ("http", "config", "expect"),
    [
        ({"url": "https://admin:pw@shop.example/a"}, "", "error[TN441]: http.url holds a user"),
        ({"url": "/a", "base_url": "https://admin:pw@shop.example"}, "", "user:password"),
        ({"url": "/a", "base_url": "https://[shop"}, "", "error[TN441]"),
        ({"url": "/a"}, 'base_url = "https://u:pw@shop.example"\n', "without user:password"),
        ({"url": "/a"}, 'base_url = "https://[shop"\n', "base_url must be an absolute"),
    ],
)
def test_a_url_with_a_password_or_no_url_at_all_is_refused_at_build(
    tmp_path: Path, http: dict[str, Any], config: str, expect: str
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.toolnexus-gen]\n" + config)
    write_specs(tmp_path / "specs", {"get_a.json": {"description": "A", "http": http}})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert expect in result.stderr and "Traceback" not in result.stderr
    assert "pw" not in result.stderr  # the password is never repeated: https://***@shop...
    assert not (tmp_path / "out").exists()


USER_SPEC = {
    "description": "Create a user",
    "profile": "reach",
    "http": {"method": "POST", "url": "/users", "base_url": "https://users.example"},
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "profile": {"type": "object", "properties": {"bio": {"type": "string"}}},
            "tags": {
                "type": "array",
                "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            },
            "meta": {
                "type": "object",
                "properties": {"source": {"type": "string"}},
                "additionalProperties": True,
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    },
}


def test_a_key_inside_an_argument_that_its_object_does_not_declare_is_never_sent(
    tmp_path: Path,
) -> None:
    pkg = build_in(tmp_path, {"create_user.json": USER_SPEC})
    with serving() as server:
        server.route("POST", "/users", Answer(200, {"ok": True}))
        tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
        nested = tk.execute_sync(
            "create_user", {"name": "a", "profile": {"bio": "b", "is_admin": 1}}
        )
        listed = tk.execute_sync("create_user", {"name": "a", "tags": [{"k": "x"}, {"role": "o"}]})
        open_ = tk.execute_sync(
            "create_user", {"name": "a", "profile": {"bio": "b"}, "meta": {"source": "s", "any": 1}}
        )
        tk.close()
    assert nested.is_error and nested.error_type == "invalid_arguments"
    assert "profile.is_admin: not an argument of this tool (profile takes: bio;" in nested.output
    assert "the call was not made" in nested.output
    assert listed.is_error and "tags.1.role: not an argument of this tool" in listed.output
    assert not open_.is_error, open_.output  # an object that takes other keys goes whole
    assert [seen.json for seen in server.seen] == [
        {"name": "a", "profile": {"bio": "b"}, "meta": {"source": "s", "any": 1}}
    ]


def test_an_mcp_proxied_tool_with_an_unknown_nested_key_is_not_sent(tmp_path: Path) -> None:
    from pydantic import BaseModel
    from test_mcp_gateway import counting_server, raw_server, starts
    from toolnexus_runtime import Toolkit, ToolSpec

    class Profile(BaseModel):
        bio: str

    class SetArgs(BaseModel):
        profile: Profile

    answer = """
    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text",
          "text": json.dumps(request["params"]["arguments"])}]}})
    """
    server = counting_server(
        tmp_path, raw_server([{"name": "set", "inputSchema": {"type": "object"}}], answer)
    )
    table = {"r_set": ToolSpec("r_set", SetArgs, None, {"mcp": {"server": "r", "tool": "set"}})}
    with Toolkit(object(), tools=table, mcp_config={"mcpServers": {"r": server}}) as tk:
        wrong = tk.execute_sync("r_set", {"profile": {"bio": "b", "is_admin": True}})
        assert starts(tmp_path) == 0  # refused before the server was even started
        right = tk.execute_sync("r_set", {"profile": {"bio": "b"}})
    assert wrong.is_error and "profile.is_admin: not an argument of this tool" in wrong.output
    assert (right.is_error, json.loads(right.output)) == (False, {"profile": {"bio": "b"}})
