"""mcp.json as each client writes it (Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo
Code), read by `toolnexus-gen sync`: the cases of runtime/tests/data/mcp_dialects.json, which
the runtime's reader runs too (runtime/tests/test_mcp_dialects.py); what another client's keys
mean is done or noted; one server's bad entry refuses that server only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli
from mcp_helpers import UPSTREAM, free_port, project, wait_for_port

from toolnexus_gen.sources import mcp_config

TABLE = json.loads((ROOT / "runtime/tests/data/mcp_dialects.json").read_text("utf-8"))
CASES = TABLE["cases"]


def expected(value: Any, workspace: Path) -> Any:
    if isinstance(value, str):
        return (
            value.replace("{workspace}", str(workspace))
            .replace("{home}", str(Path.home()))
            .replace("{sep}", os.sep)
        )
    if isinstance(value, list):
        return [expected(v, workspace) for v in value]
    if isinstance(value, dict):
        return {k: expected(v, workspace) for k, v in value.items()}
    return value


def made(server: mcp_config.Server) -> dict[str, Any]:
    return {
        "transport": "stdio" if server.local else "sse" if server.sse else "http",
        "command": list(server.command),
        "env": dict(server.env) if server.env is not None else None,
        "url": server.url,
        "headers": dict(server.headers),
        "enabled": server.enabled,
        "timeout": server.timeout,
        "disabled_tools": list(server.disabled_tools),
    }


@pytest.mark.parametrize("case", CASES, ids=[case["client"] for case in CASES])
def test_every_client_dialect(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in case["env"].items():
        monkeypatch.setenv(name, value)
    path = tmp_path / case["file"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(case["config"], indent=2))
    for rel, text in case.get("files", {}).items():
        (tmp_path / rel).write_text(text)
    config = mcp_config.read(path)  # one server's bad entry never fails the file
    assert config.names == list(case["servers"]) or set(config.names) == set(case["servers"])
    for name, want in case["servers"].items():
        server = config.server(name)
        problems = list(config.refused.get(name, ()))
        if server is not None and server.enabled and not problems:
            server, problems = mcp_config.expand(config, server, os.environ)
        said = "\n".join(d.format() for d in problems)
        if "refused" in want:
            assert problems and f"server {name!r}" in said and want["refused"] in said, said
            assert all(d.path == config.display and d.line > 1 for d in problems)
            for secret in case["env"].values():
                assert secret.strip() not in said
            continue
        assert not problems, said
        assert server is not None
        if want.get("enabled", True) is False:
            assert not server.enabled
            continue
        full = {
            "env": None,
            "url": None,
            "command": [],
            "headers": {},
            "enabled": True,
            "timeout": 30.0,
            "disabled_tools": [],
            **want,
        }
        assert made(server) == expected(full, tmp_path), name


def test_other_clients_keys_are_noted_once_each(tmp_path: Path) -> None:
    case = next(c for c in CASES if c["client"].startswith("Cline"))
    (tmp_path / "mcp.json").write_text(json.dumps(case["config"], indent=2))
    notes = [d.format() for d in mcp_config.read(tmp_path / "mcp.json").notes]
    assert len(notes) == 2, notes  # autoApprove and alwaysAllow, each once for every server
    assert any(
        "warning[TN419]: 'autoApprove' is ignored (servers local-server, remote): Cline's" in n
        for n in notes
    )
    assert any("'alwaysAllow' is ignored (servers local-server, roo)" in n for n in notes)


def test_a_vs_code_file_with_a_script_a_denylist_and_a_bad_server_syncs_the_good_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `python -c` script (newlines and a tab in args), VS Code's `servers`, `inputs` and
    envFile, Roo Code's `disabledTools` (those tools left out) and Cline's `autoApprove` (noted),
    beside a server with a typo and one whose input is not set: those two are refused, named
    at their place, and the others are synced (exit 2 says some were refused)."""
    monkeypatch.setenv("WIKI_PAGE_SIZE", "3")
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    script = (
        "import runpy, sys\n"
        "if True:\n"
        "\tsys.argv = ['upstream_mcp.py', '--page', sys.argv[1]]\n"
        f"runpy.run_path({str(UPSTREAM)!r}, run_name='__main__')\n"
    )
    folder = project(tmp_path / "p", {})
    (folder / ".vscode").mkdir()
    (folder / ".env").write_text("PAGE=${NOT_EXPANDED}\n")
    (folder / ".vscode/mcp.json").write_text(
        json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "page-size", "description": "Page"}],
                "servers": {
                    "wiki": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": ["-c", script, "${input:wiki-page-size}"],
                        "envFile": "${workspaceFolder}/.env",
                        "disabledTools": ["crash", "slow"],
                        "autoApprove": ["add"],
                    },
                    "typo": {"comand": "npx"},
                    "locked": {
                        "type": "http",
                        "url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer ${input:not-set-token}"},
                    },
                },
            },
            indent=2,
        )
    )
    (folder / "pyproject.toml").write_text(
        '[tool.toolnexus-gen]\nspecs = "specs"\nmcp_config = ".vscode/mcp.json"\n'
    )
    result = cli("sync", cwd=folder)
    assert result.exit_code == 2, result.output + result.stderr
    err = result.stderr
    assert ".vscode/mcp.json:" in err and "error[TN402]: server 'typo': unknown key 'comand'" in err
    assert (
        "error[TN404]: server 'locked': input 'not-set-token' (in headers) is read from the "
        "environment variable NOT_SET_TOKEN, which is not set"
    ) in err
    assert "warning[TN419]: 'autoApprove' is ignored (servers wiki)" in err
    assert "2 servers refused for a wrong entry in .vscode/mcp.json (typo, locked)" in err
    assert "wiki: 4 tools (stdio, " in result.output
    written = sorted(p.name for p in (folder / "specs/wiki").iterdir())
    assert written == [
        "wiki_add.json",
        "wiki_fail.json",
        "wiki_search-pages.json",
        "wiki_whoami.json",
    ]
    assert not (folder / "specs/typo").exists() and not (folder / "specs/locked").exists()
    # only the server asked for: a refused one is exit 2, nothing started
    only = cli("sync", "--server", "typo", cwd=folder)
    assert only.exit_code == 2 and "unknown key 'comand'" in only.stderr


def test_an_sse_server_is_synced_and_called(tmp_path: Path) -> None:
    """`type: "sse"` (Claude Code, Cline, VS Code): the older HTTP+SSE transport, reached with the
    SDK's SSE client by sync and by the Toolkit alike."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(UPSTREAM), "--sse", str(port)], stdout=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        entry = {"type": "sse", "url": f"http://127.0.0.1:{port}/sse", "timeout": 60}
        folder = project(tmp_path / "p", {"old": entry}, out="sse_tools")
        synced = cli("sync", cwd=folder)
        assert synced.exit_code == 0, synced.output + synced.stderr
        assert "old: 6 tools (SSE, " in synced.output
        assert cli("build", cwd=folder).exit_code == 0
        script = (
            "import asyncio, sse_tools\n"
            "async def main():\n"
            "    async with sse_tools.Toolkit(sse_tools.ToolHandlers(), mcp_config='mcp.json') as tk:\n"
            "        r = await tk.execute('old_add', {'a': 2, 'b': 3})\n"
            "        print(r.is_error, r.data)\n"
            "asyncio.run(main())\n"
        )
        called = subprocess.run(
            [sys.executable, "-c", script], cwd=folder, capture_output=True, text=True, timeout=120
        )
        assert called.returncode == 0, called.stderr
        assert called.stdout.strip() == "False {'sum': 5}"
    finally:
        process.terminate()
        process.wait(10)
