"""Runs the code blocks of one markdown page, in order, in a fresh project folder.

What a block does depends on its fence:
- ```LANG title="PATH"```: written to PATH (any language: a spec, handlers.py, pyproject.toml).
- ```sh``` / ```bash```: run with bash (-e), the project's `toolnexus-gen` and `python` first on
  PATH.
- ```python``` without a title: run in one Python process kept for the whole page (so a block
  may use what an earlier one defined; top-level `await` works).
- ```toml```, ```yaml```, ```json``` without a title: parsed; TOML holding [tool.toolnexus-gen]
  must be a configuration the reader accepts without a diagnostic.
- ```text```: what the block before it printed; each line must appear in that output, in order,
  `...` standing for any text.
An HTML comment on the line before a fence changes that block: `<!-- test: skip REASON -->`
(not run, the reason said), `<!-- test: exit N -->` (the shell block must exit N). Before any
block, `<!-- test: openai-model TURNS -->` starts a scripted OpenAI-compatible model on
127.0.0.1 (TURNS: a JSON list, each a list of [call_id, name, arguments] calls or the final
text) and points OPENAI_BASE_URL at it, so a page's agent loop runs offline on the official
client.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)(?P<info>[^\n]*)$")
MARK = re.compile(r"^\s*<!-- test: (?P<what>[\w-]+)(?: (?P<arg>.*?))? -->\s*$")
TITLE = re.compile(r'title="([^"]+)"')
RUN_LANGS = {"sh", "bash", "python"}
DATA_LANGS = {"toml", "yaml", "json"}


@dataclass
class Block:
    lang: str
    title: str | None
    code: str
    line: int
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"line {self.line} ({self.lang})"


def blocks(text: str) -> tuple[list[Block], dict[str, str]]:
    """The fenced blocks of a page (with the marks before each), and the page's own marks."""
    found: list[Block] = []
    page: dict[str, str] = {}
    lines = text.split("\n")
    marks: dict[str, str] = {}
    i = 0
    while i < len(lines):
        mark = MARK.match(lines[i])
        fence = FENCE.match(lines[i])
        if mark:
            what, arg = mark.group("what"), mark.group("arg") or ""
            if what == "openai-model":
                page[what] = arg
            else:
                marks[what] = arg
        elif fence and fence.group("lang") is not None and lines[i].strip() != "```":
            indent = fence.group("indent")
            body = []
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][len(indent) :])
                i += 1
            title = TITLE.search(fence.group("info"))
            found.append(
                Block(
                    fence.group("lang"),
                    title and title.group(1),
                    "\n".join(body) + "\n",
                    start,
                    marks,
                )
            )
            marks = {}
        elif lines[i].strip():
            marks = {}
        i += 1
    return found, page


DRIVER = r"""
import ast, asyncio, contextlib, io, sys, traceback
sys.path.insert(0, ".")
loop = asyncio.new_event_loop()
namespace = {"__name__": "__main__"}
while True:
    header = sys.stdin.readline()
    if not header:
        break
    code = sys.stdin.read(int(header))
    try:
        compiled = compile(code, "<docs block>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(compiled, namespace)
        if asyncio.iscoroutine(result):
            loop.run_until_complete(result)
        status = "ok"
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        status = "error"
    sys.stdout.write("\n\x00" + status + "\n")
    sys.stdout.flush()
"""


class Python:
    """One interpreter for a page's Python blocks."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-u", "-c", DRIVER],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, code: str) -> tuple[bool, str]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(f"{len(code)}\n{code}")
        self.process.stdin.flush()
        out = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                return False, "".join(out) + "\n(the interpreter exited)"
            if line.startswith("\x00"):
                return line.strip("\x00\n") == "ok", "".join(out).removesuffix("\n")
            out.append(line)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)


class OpenAIModel:
    """A scripted Chat Completions endpoint: each request gets the next turn."""

    def __init__(self, turns: list[Any]) -> None:
        sys.path.insert(0, str(ROOT / "examples"))
        import scripted

        responses = [scripted.openai_chat(turn) for turn in turns]
        self.requests: list[Any] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length", 0))
                outer.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                body = json.dumps(
                    responses.pop(0) if responses else {"error": {"message": "script exhausted"}}
                ).encode()
                self.send_response(200 if body and not body.startswith(b'{"error"') else 500)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def matches(expected: str, output: str) -> bool:
    """Each expected line appears in output, in order (`...` is any text)."""
    lines = output.splitlines()
    at = 0
    for want in expected.strip("\n").splitlines():
        if not want.strip():
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in want.strip().split("...")))
        while at < len(lines) and not pattern.search(lines[at]):
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


@dataclass
class Report:
    run: int = 0
    checked: int = 0
    skipped: list[str] = field(default_factory=list)


def run_page(page: Path, project: Path) -> Report:
    text = page.read_text("utf-8")
    found, marks = blocks(text)
    report = Report()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    env.pop("OPENAI_API_KEY", None)
    model = None
    if "openai-model" in marks:
        model = OpenAIModel(json.loads(marks["openai-model"]))
        env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = model.url, "scripted"
    python: Python | None = None
    output = ""
    try:
        for block in found:
            where = f"{page.name}: {block.where}"
            if "skip" in block.marks:
                assert block.marks["skip"], f"{where}: say why it is not run"
                report.skipped.append(f"{page.name}:{block.line}: {block.marks['skip']}")
                continue
            if block.title:
                path = project / block.title
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(block.code, "utf-8")
                _parse(block, where)
                report.run += 1
            elif block.lang in ("sh", "bash"):
                done = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", block.code],
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                output = done.stdout + done.stderr
                want = int(block.marks.get("exit", "0"))
                assert done.returncode == want, f"{where}: exit {done.returncode}\n{output}"
                report.run += 1
            elif block.lang == "python":
                python = python or Python(project, env)
                ok, output = python.run(block.code)
                assert ok, f"{where}:\n{output}"
                report.run += 1
            elif block.lang in DATA_LANGS:
                _parse(block, where)
                report.checked += 1
            elif block.lang == "text":
                assert matches(block.code, output), (
                    f"{where}: not in the output of the block before it:\n{block.code}\n"
                    f"--- output ---\n{output}"
                )
                report.checked += 1
            else:
                raise AssertionError(f"{where}: a {block.lang!r} block must be marked skip")
    finally:
        if python:
            python.close()
        if model:
            model.close()
    return report


def _parse(block: Block, where: str) -> None:
    """A file block is written as it is (what reads it says whether it is right, and some are
    wrong on purpose); Python files must compile. Other data blocks must parse."""
    if block.title:
        if Path(block.title).suffix == ".py":
            compile(block.code, block.title, "exec")
        return
    if block.lang == "toml":
        data = tomllib.loads(block.code)
        if "toolnexus-gen" in data.get("tool", {}):
            _check_config(block.code, where)
    elif block.lang == "yaml":
        list(yaml.safe_load_all(block.code))
    elif block.lang == "json":
        json.loads(block.code)


def _check_config(text: str, where: str) -> None:
    import tempfile

    from toolnexus_gen.config.pyproject import load_config
    from toolnexus_gen.diagnostics import DiagnosticsError

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "pyproject.toml").write_text(text)
        try:
            load_config(Path(folder))
        except DiagnosticsError as error:
            raise AssertionError(f"{where}: {[str(d) for d in error.diagnostics]}") from None
