"""mcp.json as each client writes it (Claude Desktop, Claude Code, Cursor, VS Code, Cline, Roo
Code), read by the runtime: the cases of data/mcp_dialects.json, which the generator's reader
runs too (tests/test_mcp_dialects.py), so a Toolkit reaches every server `sync` snapshotted."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolnexus_runtime.executors.mcp_config import ServerSettings, read_config, settings_for

TABLE = json.loads((Path(__file__).parent / "data" / "mcp_dialects.json").read_text("utf-8"))
CASES = TABLE["cases"]


def expected(value: Any, workspace: Path) -> Any:
    """An expectation with {workspace}, {home} and {sep} filled in."""
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


def made(settings: ServerSettings) -> dict[str, Any]:
    return {
        "transport": settings.transport,
        "command": list(settings.command),
        "env": dict(settings.env) if settings.env is not None else None,
        "url": settings.url,
        "headers": dict(settings.headers),
        "enabled": settings.enabled,
        "timeout": settings.timeout,
    }


@pytest.mark.parametrize("case", CASES, ids=[case["client"] for case in CASES])
def test_every_client_dialect(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in case["env"].items():
        monkeypatch.setenv(name, value)
    path = tmp_path / case["file"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(case["config"]))
    for rel, text in case.get("files", {}).items():
        (tmp_path / rel).write_text(text)
    workspace = tmp_path
    where, entries = read_config(path)  # one server's bad entry never fails the file
    assert set(entries) == set(case["servers"])
    for name, want in case["servers"].items():
        if "refused" in want:
            with pytest.raises(ValueError, match=f"server {name!r}") as caught:
                settings_for(where, name, entries[name])
            assert want["refused"] in str(caught.value)
            for secret in case["env"].values():
                assert secret.strip() not in str(caught.value)
            continue
        settings = settings_for(where, name, entries[name])
        if want.get("enabled", True) is False:
            assert not settings.enabled
            continue
        full = {
            "env": None,
            "url": None,
            "command": [],
            "headers": {},
            "enabled": True,
            "timeout": 30.0,
            **{k: v for k, v in want.items() if k != "disabled_tools"},
        }
        assert made(settings) == expected(full, workspace), name
