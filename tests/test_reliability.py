"""Ownership of the output folder, nothing written outside it, and execute under load."""

from __future__ import annotations

import asyncio
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import WEATHER, cli, snapshot, write_specs

CALLS = int(os.environ.get("TNX_LOAD_CALLS", "10000"))


def files_outside(root: Path, out: Path) -> dict[str, tuple[bytes, int]]:
    return {k: v for k, v in snapshot(root).items() if not (root / k).is_relative_to(out)}


def test_nothing_is_written_outside_out(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "project/specs", WEATHER)
    (tmp_path / "project/pyproject.toml").write_text('[tool.toolnexus-gen]\nout = "pkg/tools"\n')
    before = files_outside(tmp_path, tmp_path / "project/pkg/tools")
    result = cli("build", "specs", cwd=tmp_path / "project")
    assert result.exit_code == 0, result.stderr
    after = files_outside(tmp_path, tmp_path / "project/pkg/tools")
    assert after == before  # not a byte, not an mtime, outside the output folder
    assert specs.is_dir()


def test_a_non_empty_folder_the_tool_did_not_create_is_refused(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "src"
    (out / "app").mkdir(parents=True)
    (out / "app/main.py").write_text("print('mine')\n")
    (out / "README.md").write_text("mine\n")
    before = snapshot(out)
    result = cli("build", str(specs), "--out", str(out))
    assert result.exit_code == 2
    assert "did not generate" in result.stderr and "README.md" in result.stderr
    assert snapshot(out) == before
    assert not (out / ".toolnexus-gen.lock").exists()


def test_a_symlink_inside_out_is_refused(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "out"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    schemas = out / "schemas"
    for item in schemas.iterdir():
        item.unlink()
    schemas.rmdir()
    schemas.symlink_to(elsewhere, target_is_directory=True)
    (specs / "now.yaml").write_text("description: Current time, changed\n")
    result = cli("build", str(specs), "--out", str(out))
    assert result.exit_code == 2
    assert "symbolic link" in result.stderr
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def test_a_user_file_added_later_is_never_touched(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "out"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    (out / "notes.txt").write_text("mine")
    (specs / "now.yaml").unlink()  # now.py becomes stale: it must not be removed either
    before = snapshot(out)
    result = cli("build", str(specs), "--out", str(out))
    assert result.exit_code == 2 and "notes.txt" in result.stderr
    assert snapshot(out) == before


def test_a_corrupt_manifest_never_makes_user_files_deletable(tmp_path: Path) -> None:
    specs = write_specs(tmp_path / "specs", WEATHER)
    out = tmp_path / "out"
    assert cli("build", str(specs), "--out", str(out)).exit_code == 0
    (out / ".toolnexus-gen.json").write_text('{"files": ["../../etc/passwd", "/abs", 3]}')
    result = cli("build", str(specs), "--out", str(out))
    # Without a trustworthy manifest every existing file counts as the user's: refused.
    assert result.exit_code == 2 and "did not generate" in result.stderr


# -- execute under load ---------------------------------------------------------------------------

SPECS = {
    "echo.yaml": {
        "description": "Echo",
        "input_schema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
    "boom.yaml": {
        "description": "Raises",
        "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
    "nap.yaml": {
        "description": "Sleeps, async",
        "input_schema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "number"}},
        },
    },
    "doze.yaml": {
        "description": "Sleeps, sync",
        "input_schema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "number"}},
        },
    },
}


@pytest.fixture
def toolkit(build_package: Any) -> Any:
    pkg = build_package(SPECS)

    class Handlers(pkg.ToolHandlers):  # type: ignore[name-defined,misc]
        async def echo(self, args: Any, ctx: Any) -> Any:
            return {"n": args.n, "call": ctx.call_id}

        def boom(self, args: Any, ctx: Any) -> str:
            raise ValueError(f"boom {args.n}")

        async def nap(self, args: Any, ctx: Any) -> str:
            await asyncio.sleep(args.s or 0)
            return f"nap {args.n}"

        def doze(self, args: Any, ctx: Any) -> str:
            time.sleep(args.s or 0)
            return f"doze {args.n}"

    return pkg, pkg.Toolkit(Handlers())


def expected(kind: str, n: int) -> tuple[bool, str]:
    return {
        "valid": (False, f'"n": {n}'),
        "invalid": (True, "Invalid arguments for tool 'echo'"),
        "bad_json": (True, "not valid JSON"),
        "unknown": (True, f"Unknown tool 'tool_{n}'"),
        "raising": (True, f"boom {n}"),
        "slow": (False, f"nap {n}"),
        "slow_sync": (False, f"doze {n}"),
        "timeout": (True, "did not finish within 0.05 seconds"),
    }[kind]


def call(kind: str, n: int) -> tuple[str, Any, float | None]:
    return {
        "valid": ("echo", {"n": n}, None),
        "invalid": ("echo", {"n": f"x{n}"}, None),
        "bad_json": ("echo", '{"n": ', None),
        "unknown": (f"tool_{n}", {}, None),
        "raising": ("boom", {"n": n}, None),
        # a generous deadline: thousands of calls share one event loop on a machine that may be busy
        "slow": ("nap", {"n": n, "s": 0.01}, 120.0),
        "slow_sync": ("doze", {"n": n, "s": 0.001}, 120.0),
        "timeout": ("nap", {"n": n, "s": 2.0}, 0.05),
    }[kind]


def test_execute_under_load(toolkit: Any) -> None:
    pkg, tk = toolkit
    kinds = ["valid"] * 40 + ["invalid", "bad_json", "unknown", "raising"] * 8 + ["slow"] * 20
    kinds += ["slow_sync"] * 2 + ["timeout"] * 6
    rng = random.Random(7)
    plan = [(rng.choice(kinds), n) for n in range(CALLS)]

    async def main() -> list[Any]:
        jobs = []
        for kind, n in plan:
            name, args, timeout = call(kind, n)
            ctx = pkg.ToolContext(call_id=f"c{n}")
            jobs.append(tk.execute(name, args, ctx, timeout=timeout))
        return await asyncio.gather(*jobs)

    began = time.perf_counter()
    results = asyncio.run(main())
    elapsed = time.perf_counter() - began
    assert len(results) == CALLS
    counts: dict[str, int] = {}
    for (kind, n), result in zip(plan, results, strict=True):
        is_error, text = expected(kind, n)
        assert result.is_error is is_error, (kind, n, result)
        assert text in result.output, (kind, n, result.output)
        if kind == "valid":
            assert result.data == {"n": n, "call": f"c{n}"}  # its own call, not a neighbour's
        counts[kind] = counts.get(kind, 0) + 1
    print(f"\n{CALLS} concurrent calls in {elapsed:.2f} s: {counts}")
    assert all(counts.get(kind, 0) > 0 for kind in set(kinds))
    # The toolkit keeps working afterwards, sync and async.
    assert tk.execute_sync("echo", {"n": 1}).data == {"n": 1, "call": None}
    assert asyncio.run(tk.execute("nap", {"n": 2})).output == "nap 2"
