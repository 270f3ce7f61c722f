"""Run the official MCP conformance suite against the conformance server (`make conformance`).

    python run.py [--mode stateless|sessions] [--scenario NAME] [--cache DIR]

Installs @modelcontextprotocol/conformance and a Node 22 binary (the npm package `node@22`; the
suite needs Node 22) with npm into a cache folder, once; then, for each mode of our HTTP server
(`asgi_app` stateless, as it serves by default, and with sessions), serves the tools of this
folder on 127.0.0.1, runs every server scenario of the suite (`--suite all`, the pending ones
too) and prints one line per scenario: its result in each mode, or why it does not apply to a
tool server. Exit 0 when every scenario that applies passes in every mode.

The cache: $TOOLNEXUS_CONFORMANCE_CACHE, else ~/.cache/toolnexus-gen/conformance-<version>.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = "@modelcontextprotocol/conformance"
VERSION = "0.1.16"
NODE = "node@22"
MODES = ("stateless", "sessions")

# Why a scenario does not apply to a server that toolnexus-gen builds: it serves tools, and
# only tools; handlers are written once for every provider.
NOT_TOOLS = "a toolnexus-gen server serves tools only (no {what} capability is declared)"
NOT_APPLICABLE = {
    "completion-complete": (
        "completion/complete suggests values for the arguments of prompts and resource "
        "templates; " + NOT_TOOLS.format(what="prompts, resources or completions")
    ),
    **{
        name: NOT_TOOLS.format(what="resources")
        + "; a tool's result can still embed a resource or link to one (tools-call-"
        "embedded-resource)"
        for name in (
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
        )
    },
    **{
        name: NOT_TOOLS.format(what="prompts")
        for name in (
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
        )
    },
    **{
        name: (
            "the tool asks the client for something in the middle of a call (sampling/"
            "createMessage, elicitation/create): a handler is written once for every provider, "
            "and only an MCP client can answer such a request; a stateless server cannot even "
            "receive the answer (the SDK refuses: no back-channel)"
        )
        for name in (
            "tools-call-sampling",
            "tools-call-elicitation",
            "elicitation-sep1034-defaults",
            "elicitation-sep1330-enums",
        )
    },
    "server-sse-polling": (
        "resumable event streams (SEP-1699, in the suite's pending set): it needs a test-only "
        "tool that closes its own stream mid-call and an event store to replay the stream "
        "from; the server keeps none (stateless, there is no session to resume)"
    ),
}
# What a scenario that applies must give in each mode: "passed", or "warning" where the suite
# only warns (server-sse-multiple-streams needs a session id, which a stateless server has not).
EXPECTED = {("server-sse-multiple-streams", "stateless"): "warning"}


def cache_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    if os.environ.get("TOOLNEXUS_CONFORMANCE_CACHE"):
        return Path(os.environ["TOOLNEXUS_CONFORMANCE_CACHE"])
    return Path.home() / ".cache" / "toolnexus-gen" / f"conformance-{VERSION}"


def installed(folder: Path) -> tuple[Path, Path] | None:
    node = folder / "node_modules" / "node" / "bin" / "node"
    entry = folder / "node_modules" / SUITE / "dist" / "index.js"
    manifest = folder / "node_modules" / SUITE / "package.json"
    try:
        if json.loads(manifest.read_text("utf-8"))["version"] != VERSION:
            return None
        found = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None
    if found.returncode != 0 or not found.stdout.startswith("v22."):
        return None
    return node, entry


def install(folder: Path) -> tuple[Path, Path]:
    """The Node 22 binary and the suite's entry point, installed into `folder` once (a lock
    file keeps two runs from installing at the same time)."""
    found = installed(folder)
    if found is not None:
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("make conformance needs npm (Node.js) on PATH to install the suite")
    folder.parent.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = installed(folder)
        if found is not None:
            return found
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        (staging / "package.json").write_text('{"private": true}\n')
        print(f"installing {SUITE}@{VERSION} and {NODE} into {folder} ...", flush=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix"]
            + [str(staging), NODE, f"{SUITE}@{VERSION}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise SystemExit(f"npm install failed:\n{done.stdout}{done.stderr}")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
    found = installed(folder)
    if found is None:
        raise SystemExit(f"{folder}: npm installed the suite, but no Node 22 binary runs from it")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(mode: str) -> Iterator[str]:
    """The conformance server (serve.py) in `mode` on a free port of 127.0.0.1: its MCP URL."""
    port = free_port()
    command = [sys.executable, str(HERE / "serve.py"), str(port)]
    process = subprocess.Popen(command + (["--sessions"] if mode == "sessions" else []))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the conformance server ({mode}) did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


SUMMARY = re.compile(r"^[\u2713\u2717] (\S+): (\d+) passed, (\d+) failed$", re.MULTILINE)


def run_suite(node: Path, entry: Path, url: str, scenario: str | None) -> dict[str, str]:
    """Each scenario's outcome against the server at `url`, from the suite's summary: failed
    (a check failed), passed, or warning (no check passed nor failed: the suite only warned)."""
    command = [str(node), str(entry), "server", "--url", url]
    command += ["--scenario", scenario] if scenario else ["--suite", "all"]
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if scenario:  # one scenario prints its counts, not the summary
        found = re.search(r"Passed: (\d+)/\d+, (\d+) failed", done.stdout)
        rows = [(scenario, *found.groups())] if found else []
    else:
        rows = SUMMARY.findall(done.stdout)
    if not rows:
        raise SystemExit(f"the suite ran no scenario:\n{done.stdout}{done.stderr}")
    return {
        name: "failed" if int(failed) else "passed" if int(passed) else "warning"
        for name, passed, failed in rows
    }


def verdict(scenario: str, results: dict[str, str]) -> tuple[bool, str]:
    """Whether a scenario that applies is as it should be in every mode, and its line."""
    expected = {mode: EXPECTED.get((scenario, mode), "passed") for mode in results}
    ok = all(results[mode] == expected[mode] for mode in results)
    cells = "".join(f"{results.get(mode, '-'):11}" for mode in MODES)
    note = "" if ok else "FAILS (expected: " + ", ".join(expected.values()) + ")"
    if ok and "warning" in results.values():
        note = "(stateless: no session id, so the suite can only warn)"
    return ok, f"  {scenario:30} {cells}{note}".rstrip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mode", choices=MODES, action="append")
    parser.add_argument("--scenario")
    parser.add_argument("--cache")
    options = parser.parse_args()
    node, entry = install(cache_dir(options.cache))
    by_mode: dict[str, dict[str, str]] = {}
    for mode in options.mode or MODES:
        with serving(mode) as url:
            by_mode[mode] = run_suite(node, entry, url, options.scenario)
    scenarios = sorted({name for results in by_mode.values() for name in results})
    applies = [name for name in scenarios if name not in NOT_APPLICABLE]
    print(
        f"{SUITE} {VERSION}: server scenarios (--suite all), our server stateless and with sessions"
    )
    print(f"  {'scenario':30} " + "".join(f"{mode:11}" for mode in MODES))
    good = True
    for scenario in applies:
        results = {mode: by_mode[mode][scenario] for mode in by_mode if scenario in by_mode[mode]}
        ok, line = verdict(scenario, results)
        good &= ok
        print(line)
    print("Not applicable to a tool server (their checks fail: the server has no such feature):")
    reasons: dict[str, list[str]] = {}
    for scenario in scenarios:
        if scenario in NOT_APPLICABLE:
            reasons.setdefault(NOT_APPLICABLE[scenario], []).append(scenario)
    for reason, names in reasons.items():
        print(f"  {', '.join(names)}:")
        print(textwrap.fill(reason, 96, initial_indent="    ", subsequent_indent="    "))
    passed = sum(all(r.get(name) != "failed" for r in by_mode.values()) for name in applies)
    print(
        f"{passed} of the {len(applies)} scenarios that apply passed in every mode; "
        f"{len(scenarios) - len(applies)} do not apply."
    )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
