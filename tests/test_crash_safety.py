"""Crash safety: builds killed with SIGKILL at random moments never leave a half-written file,
and the next build converges; two builds of one output folder at once never interleave."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, generated, write_specs

KILLS = int(os.environ.get("TNX_KILLS", "6"))
ROUNDS = int(os.environ.get("TNX_ROUNDS", "4"))  # pairs of racing builds
# make test-all also runs the 200-kill soak


def specs(version: str, count: int = 24) -> dict[str, Any]:
    tools = {
        f"tool_{i:02}.yaml": {
            "description": f"Tool {i}, version {version}",
            "input_schema": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": f"query ({version})"},
                    "n": {"type": "integer", "minimum": 0},
                    "mode": {"type": "string", "enum": ["a", "b", version]},
                },
                "required": ["q"],
            },
        }
        for i in range(count)
    }
    if version == "B":  # one tool fewer and one more, so stale removal happens too
        del tools["tool_00.yaml"]
        tools["extra_b.yaml"] = {"description": "Only in B"}
    return tools


def cache_is_whole(out: Path) -> None:
    """Cache files are replaced atomically too: each is absent or matches its own checksum."""
    from toolnexus_gen.incremental import cache

    for name in (cache.STATE, cache.UNITS, cache.MEMO):
        path = out / cache.CACHE_DIR / name
        if path.exists():
            assert cache._load(path) is not None, f"{name} is torn"


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("crash")
    return {version: write_specs(root / f"specs_{version}", specs(version)) for version in "AB"}


def manifest_stamp(out: Path) -> int:
    try:
        return (out / ".toolnexus-gen.json").stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def wait_for_writing(process: subprocess.Popen[bytes], out: Path, before: int) -> bool:
    """Spin until the build starts writing (its first act is to rewrite the manifest)."""
    while process.poll() is None:
        if manifest_stamp(out) != before:
            return True
        time.sleep(0.0002)
    return False


def references(
    out: Path, versions: dict[str, Path]
) -> dict[str, tuple[Path, dict[str, bytes], float]]:
    """Each version built into `out` itself (headers name the paths), after the other one: its
    tree, and how long its writing phase took."""
    found = {}
    for version, folder in [*versions.items(), *versions.items()]:
        before = manifest_stamp(out)
        process = start_build(folder, out)
        writing = wait_for_writing(process, out, before)
        began = time.perf_counter()
        assert process.wait() == 0 and writing
        found[version] = (folder, generated(out), time.perf_counter() - began)
    return found


def start_build(folder: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolnexus_gen", "build", str(folder), "--out", str(out), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def assert_every_file_complete(out: Path, a: dict[str, bytes], b: dict[str, bytes]) -> str:
    """Each file is exactly A's or B's version; returns 'A', 'B' or 'mixed' for the whole tree."""
    current = generated(out)
    for name, data in current.items():
        if name.endswith(".tnx-tmp"):
            continue  # a killed build's temporary file: never a final name
        if name == ".toolnexus-gen.json":
            assert data.startswith(b"{") and data.endswith(b"}\n"), "torn manifest"
            continue
        assert data in (a.get(name), b.get(name)), f"{name} is neither version: torn write"
    finals = {k: v for k, v in current.items() if not k.endswith(".tnx-tmp")}
    return "A" if finals == a else "B" if finals == b else "mixed"


def kill_loop(
    out: Path, versions: dict[str, Any], kills: int, seed: int
) -> tuple[dict[str, int], dict[str, bytes]]:
    rng = random.Random(seed)
    refs = references(out, versions)
    (folder_a, a, time_a), (folder_b, b, time_b) = refs["A"], refs["B"]
    window = max(time_a, time_b)  # how long writing the files takes here, now
    outcomes = {"A": 0, "B": 0, "mixed": 0}
    for i in range(kills):
        folder = folder_b if i % 2 else folder_a
        before = manifest_stamp(out)
        process = start_build(folder, out)
        if rng.random() < 0.8:  # most kills land while files are being written
            wait_for_writing(process, out, before)
            time.sleep(rng.uniform(0, window * 0.35))  # the window includes interpreter exit
        else:  # the rest at any moment, start-up included
            time.sleep(rng.uniform(0, 1.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        outcomes[assert_every_file_complete(out, a, b)] += 1
        cache_is_whole(out)
    return outcomes, b


@pytest.mark.parametrize(
    "kills",
    [pytest.param(KILLS, id="quick"), pytest.param(200, id="soak", marks=pytest.mark.soak)],
)
def test_sigkill_never_tears_a_file_and_the_next_build_converges(
    tmp_path: Path, versions: dict[str, Any], kills: int
) -> None:
    # Two output folders killed in parallel (one per core), half of the kills each.
    outs = [tmp_path / "out1", tmp_path / "out2"]
    results: dict[Path, tuple[dict[str, int], dict[str, bytes]]] = {}
    errors: list[BaseException] = []

    def worker(out: Path, seed: int) -> None:
        try:
            results[out] = kill_loop(out, versions, kills // 2, seed)
        except BaseException as exc:  # noqa: BLE001 (re-raised below)
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(out, n)) for n, out in enumerate(outs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    total = {k: sum(r[0][k] for r in results.values()) for k in ("A", "B", "mixed")}
    print(f"\n{kills} kills: trees left as A {total['A']}, B {total['B']}, mixed {total['mixed']}")
    assert sum(total.values()) == kills // 2 * 2
    for out in outs:
        result = cli("build", str(versions["B"]), "--out", str(out))
        assert result.exit_code == 0, result.stderr
        assert generated(out) == results[out][1], "the next build must converge to the new tree"
        assert not list(out.rglob("*.tnx-tmp"))
        assert cli("build", str(versions["B"]), "--out", str(out), "--check").exit_code == 0


def test_concurrent_builds_of_one_folder_never_interleave(
    tmp_path: Path, versions: dict[str, Any]
) -> None:
    out = tmp_path / "out"
    refs = references(out, versions)
    (folder_a, a, _), (folder_b, b, _) = refs["A"], refs["B"]
    for _ in range(ROUNDS):
        first, second = start_build(folder_a, out), start_build(folder_b, out)
        assert first.wait() == 0 and second.wait() == 0
        assert assert_every_file_complete(out, a, b) in ("A", "B"), "builds interleaved"
