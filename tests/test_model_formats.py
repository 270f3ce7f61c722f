"""What real third-party schemas hold and the generated package must survive: formats whose
pydantic type needs a package beyond pydantic (email, ulid), a format typed other than str with
a string default (`format: uri` plus a default URL), model names long enough that ruff's isort
wraps their import, and schemas that refer to themselves (a recursive response or input).
Each package passes mypy --strict and ruff, and imports with only pydantic and the runtime."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, cli_process, write_specs
from runtime_only import run as run_runtime_only
from sdk_check import assert_accepted

RUFF = str(Path(sysconfig.get_path("scripts")) / "ruff")


def tool(properties: dict[str, Any], profile: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "description": "A tool with odd formats",
        "input_schema": {"type": "object", "properties": properties, **extra},
        **({"profile": profile} if profile else {}),
    }


def quality(folder: Path, package: str) -> None:
    """mypy --strict, ruff's defaults and isort, and ruff format, on the package."""
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", package],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout
    for rules in ([], ["--extend-select", "I,E,W,F,UP,B", "--ignore", "E501"]):
        ruff = subprocess.run(
            [RUFF, "check", "--isolated", *rules, package],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        assert ruff.returncode == 0, ruff.stdout
    fmt = subprocess.run(
        [RUFF, "format", "--isolated", "--check", "--diff", package],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


FORMATS = {
    "formats.json": tool(
        {
            "to": {"type": "string", "format": "email", "description": "Who gets it"},
            "cc": {"type": "array", "items": {"type": "string", "format": "idn-email"}},
            "trace": {"type": "string", "format": "ulid"},
            "page": {"type": "string", "format": "uri", "default": "https://example.com/a"},
            "when": {"type": "string", "format": "date-time", "default": "2026-01-01T00:00:00Z"},
            "id": {
                "type": "string",
                "format": "uuid",
                "default": "0" * 8 + "-0000-0000-0000-" + "0" * 12,
            },
            "link": {"type": "string", "format": "uri"},
            # properties named like keywords are properties, not keywords
            "format": {"type": "string", "enum": ["text", "markdown"]},
            "default": {"type": "string", "format": "email"},
        },
        required=["to"],
        profile="reach",  # Gemini takes none of these formats in `parameters`
    ),
}


def test_formats_need_no_extra_package_and_are_still_checked(tmp_path: Path) -> None:
    write_specs(tmp_path / "specs", FORMATS)
    result = cli("build", "specs", "--out", "fmt_pkg", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    quality(tmp_path, "fmt_pkg")
    model = (tmp_path / "fmt_pkg/models/formats.py").read_text()
    assert "EmailStr" not in model and "ulid" not in model.split("class")[0]
    script = """
import asyncio, json
import fmt_pkg
from fmt_pkg import FormatsArgs, ToolContext
args = FormatsArgs(to="ana@example.com")
print(json.dumps([args.page, args.when, args.id, type(args.page).__name__]))
class H(fmt_pkg.ToolHandlers):
    def formats(self, args, ctx):
        return f"{args.to} {args.link} {args.cc}"
tk = fmt_pkg.Toolkit(H())
def call(arguments):
    r = asyncio.run(tk.execute("formats", arguments, ToolContext()))
    return [r.is_error, r.output]
print(json.dumps(call({"to": "ana@example.com", "link": "https://example.com/x"})))
print(json.dumps(call({"to": "not an address"})))
print(json.dumps(call({"to": "ana@example.com", "cc": ["bob"]})))
print(json.dumps(call({"to": "ana@example.com", "trace": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})))
print(json.dumps(call({"to": "ana@example.com", "trace": "not-a-ulid"})))
print(json.dumps(call({"to": "ana@example.com", "link": "no scheme"})))
"""
    ran = run_runtime_only(script, tmp_path, ("fmt_pkg",))
    assert ran.returncode == 0, ran.stderr  # EmailStr would need email-validator: ImportError
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    # a format typed other than str with a string default: a str, as its default is
    assert lines[0] == [
        "https://example.com/a",
        "2026-01-01T00:00:00Z",
        "00000000-0000-0000-0000-000000000000",
        "str",
    ]
    assert lines[1] == [False, "ana@example.com https://example.com/x None"]
    refused = [lines[2], lines[3], lines[5], lines[6]]
    assert all(is_error for is_error, _ in refused), refused
    assert "to" in lines[2][1] and "cc" in lines[3][1] and "trace" in lines[5][1]
    assert "link" in lines[6][1]  # a uri without a default keeps pydantic's URL check
    assert lines[4] == [False, "ana@example.com None None"]


def test_base64_text_is_handed_on_as_written_whatever_it_encodes(tmp_path: Path) -> None:
    """`format: byte` (base64 text): any content (an image is not UTF-8), either alphabet,
    padded or not (Google's APIs write URL-safe text), reaches the handler as the model wrote it;
    text that is not base64 is refused, naming the argument."""
    specs = {
        "put_image.json": tool(
            {
                "content": {"type": "string", "format": "byte"},
                "thumb": {"type": "string", "format": "byte", "default": "AA=="},
                # a string or a number: no pattern (a constr in a union fails mypy --strict)
                "either": {"type": ["string", "integer"], "format": "byte"},
            },
            required=["content"],
            profile="reach",
        )
    }
    write_specs(tmp_path / "specs", specs)
    result = cli("build", "specs", "--out", "b64_pkg", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    quality(tmp_path, "b64_pkg")
    script = """
import asyncio, base64, json
import b64_pkg
from b64_pkg import ToolContext
class H(b64_pkg.ToolHandlers):
    def put_image(self, args, ctx):
        return json.dumps([args.content, args.thumb, base64.urlsafe_b64decode(
            args.content.replace("+", "-").replace("/", "_") + "==").hex()])
tk = b64_pkg.Toolkit(H())
def call(text):
    r = asyncio.run(tk.execute("put_image", {"content": text}, ToolContext()))
    return [r.is_error, r.output]
png = bytes.fromhex("89504e470d0a1a0aff")
for text in [base64.b64encode(png).decode(), base64.urlsafe_b64encode(b"\\xfb\\xff").decode(),
             base64.urlsafe_b64encode(b"\\xfb\\xff\\xbf").decode().rstrip("="),
             "QUJD\\r\\nRA==\\r\\n"]:  # MIME: lines of 76 characters, CRLF
    print(json.dumps(call(text)))
for text in ["not base64!", "A", "AB=", "QUJD!REVG", "AA==AA=="]:
    print(json.dumps(call(text)))
"""
    ran = run_runtime_only(script, tmp_path, ("b64_pkg",))
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    outputs = [json.loads(output) for is_error, output in lines[:4] if not is_error]
    assert outputs == [
        ["iVBORw0KGgr/", "AA==", "89504e470d0a1a0aff"],
        ["-_8=", "AA==", "fbff"],
        ["-_-_", "AA==", "fbffbf"],
        ["QUJD\r\nRA==\r\n", "AA==", "41424344"],
    ], lines
    assert len(lines) == 9
    for is_error, output in lines[4:]:  # not base64: refused, naming the argument
        assert is_error and "content" in output and "pattern" in output, output


def test_a_long_model_import_is_wrapped_as_ruff_sorts_it(tmp_path: Path) -> None:
    name = "a_tool_whose_name_is_long_enough_to_wrap_its_model_import"
    write_specs(
        tmp_path / "specs", {f"{name}.json": tool({"q": {"type": "string"}}), "b.json": tool({})}
    )
    result = cli("build", "specs", "--out", "long_pkg", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "long_pkg/models/__init__.py").read_text()
    assert f"from .{name} import (\n    ATool" in text
    assert "from .b import BArgs\n" in text
    quality(tmp_path, "long_pkg")


SELF_OUTPUT = {
    "description": "A tree of pages",
    "input_schema": {"type": "object", "properties": {"root": {"type": "string"}}},
    "output_schema": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
    },
}
SELF_INPUT = {
    "description": "Files and folders",
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
    },
}


@pytest.mark.parametrize("spec", [SELF_OUTPUT, SELF_INPUT], ids=["response", "input"])
def test_a_self_referring_schema_is_a_located_error_for_gemini_never_a_traceback(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    write_specs(tmp_path / "specs", {"tree.json": spec})
    result = cli_process("build", "specs", "--out", "out", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if " error[" in line]
    assert line.startswith("specs/tree.json:") and "error[TN315]: gemini" in line
    assert not (tmp_path / "out").exists()
    # every other target carries it as it is
    for target in ("openai", "openai_responses", "anthropic", "mcp", "bedrock"):
        other = cli_process(
            "build", "specs", "--out", f"out_{target}", "--target", target, cwd=tmp_path
        )
        assert other.returncode == 0, (target, other.stderr)


@pytest.mark.parametrize("spec", [SELF_OUTPUT, SELF_INPUT], ids=["response", "input"])
def test_a_self_referring_schema_reaches_every_target_under_reach(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    name = f"tree_{'out' if 'output_schema' in spec else 'in'}"
    write_specs(tmp_path / "specs", {"tree.json": {**spec, "profile": "reach"}})
    result = cli("build", "specs", "--out", name, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    files = {
        p.stem: json.loads(p.read_text()) for p in (tmp_path / name / "schemas").glob("*.json")
    }
    assert_accepted(files)
    (declaration,) = files["gemini"][0]["functionDeclarations"]
    assert "responseJsonSchema" in declaration or "parametersJsonSchema" in declaration
    quality(tmp_path, name)
    script = f"""
import {name}
from {name}.models.tree import TreeArgs
print(TreeArgs.model_validate({{"name": "a", "children": [{{"name": "b", "children": []}}]}}) if "name" in TreeArgs.model_fields else "ok")
"""
    ran = run_runtime_only(script, tmp_path, (name,))
    assert ran.returncode == 0, ran.stderr
