"""The build cache, kept inside the output folder (`.toolnexus-gen.cache/`), never trusted blindly.

Two files, each carrying a checksum of its own content; a missing, unreadable, stale or corrupted
file is simply ignored, so the cache can make a build faster but never make it wrong.

- `state.json`: what the last successful build read (every spec file's size, mtime and SHA-256)
  and wrote (every output file's SHA-256), under a key made of the configuration and the
  generator's own fingerprint. When nothing changed, `build` and `build --check` answer from it
  without importing the pipeline (the no-op fast path); `--check` still hashes every output file,
  so it stays exact.
- `units.json`: what the last build made of each spec (reuse.py), so the next build reuses the
  unchanged ones; it names the state it belongs to by a digest of the outputs recorded there.
- `memo.json`: per-tool work that is expensive and depends only on its inputs: schemas already
  found valid (keyed by the schema, its examples and every file its $refs reach) and model
  sources (keyed by the model schema, class name and header).

Everything that can change an output is in a key: spec bytes, referenced files, configuration,
toolnexus-gen's version and source files, datamodel-code-generator's version, the Python version.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from toolnexus_gen import __version__
from toolnexus_gen.fs.paths import CACHE_DIR, SPEC_SUFFIXES, TMP_SUFFIX, folder_files

STATE = "state.json"
UNITS = "units.json"
MEMO = "memo.json"


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@cache
def generator_fingerprint() -> str:
    """toolnexus-gen's version and source files, datamodel-code-generator's version, Python's.

    Read from the file system without importing anything (this runs on the no-op fast path).
    """
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package folder
    parts = [__version__, sys.version.split()[0], _dist_version("datamodel_code_generator")]
    for root in (
        here,
        os.path.join(here, "templates"),
        os.path.join(os.path.dirname(here), "templates"),
    ):
        stack = [root]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        stack.append(entry.path)
                elif entry.name.endswith((".py", ".jinja", ".json")):
                    stat = entry.stat()
                    parts.append(f"{entry.path}:{stat.st_size}:{stat.st_mtime_ns}")
    return sha("\n".join(parts))


def _dist_version(module: str) -> str:
    """An installed distribution's version, from its .dist-info folder name (no import)."""
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        prefix = module + "-"
        for name in names:
            if name.startswith(prefix) and name.endswith((".dist-info", ".egg-info")):
                return name[len(prefix) :].rsplit(".", 1)[0]
        if module in names:
            return "?"
    return "-"


def _load(path: Path) -> dict[str, Any] | None:
    """A cache file's body, or None when missing, unreadable or not matching its checksum."""
    try:
        raw = path.read_bytes()
        checksum, _, text = raw.partition(b"\n")
        if checksum.decode("ascii") != sha(text):
            return None
        body = json.loads(text)
        return body if isinstance(body, dict) else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _save(path: Path, body: dict[str, Any]) -> None:
    from toolnexus_gen.fs.output import (
        atomic_write,
    )  # the one module that writes into the output folder

    text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    atomic_write(path, sha(text).encode("ascii") + b"\n" + text)


# -- inputs and outputs -------------------------------------------------------------------------


def spec_files(specs: Path) -> dict[str, os.stat_result]:
    """Every JSON/YAML file under the spec folder (shared fragments included), by relative path."""
    found: dict[str, os.stat_result] = {}
    stack = [""]
    base = str(specs)
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(base, rel) if rel else base))
        except OSError:
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    stack.append(name)
            elif entry.is_symlink() and entry.is_dir():
                # a linked folder is an input too (the build refuses one that leaves the folder)
                found[name + "/"] = entry.stat(follow_symlinks=False)
            elif entry.name.endswith(SPEC_SUFFIXES):
                found[name] = entry.stat()
    return found


def _same(stat: os.stat_result, recorded: list[Any], path: str) -> bool:
    """True when the file still has the recorded content (stat first, SHA-256 when stat differs)."""
    if stat.st_size == recorded[0] and stat.st_mtime_ns == recorded[1]:
        return True
    if path.endswith("/"):
        return False
    try:
        with open(path, "rb") as handle:
            return bool(sha(handle.read()) == recorded[2])
    except OSError:
        return False


@dataclass
class Snapshot:
    inputs: dict[str, list[Any]] = field(default_factory=dict)  # rel: [size, mtime_ns, sha]
    # the files of the source folders (options.source_folders), by source_files's key
    sources: dict[str, list[Any]] = field(default_factory=dict)


def source_files(options: Any) -> dict[str, os.stat_result]:
    """Every file of the folders sources read (the skills folder), keyed by its path relative
    to the project (options.root)."""
    found: dict[str, os.stat_result] = {}
    for folder in options.source_folders:
        prefix = Path(os.path.relpath(folder, options.root)).as_posix()
        for rel, stat in folder_files(folder).items():
            found[f"{prefix}/{rel}"] = stat
    return found


def snapshot_sources(options: Any, state: dict[str, Any] | None) -> dict[str, list[Any]]:
    """The source folders' files (Snapshot.sources), as snapshot_inputs records the spec
    folder's."""
    recorded: dict[str, list[Any]] = state.get("sources", {}) if state else {}
    found: dict[str, list[Any]] = {}
    for rel, stat in source_files(options).items():
        known = recorded.get(rel)
        if known is not None and known[:2] == [stat.st_size, stat.st_mtime_ns]:
            found[rel] = list(known)
        else:
            digest = sha((options.root / rel).read_bytes())
            found[rel] = [stat.st_size, stat.st_mtime_ns, digest]
    return found


def changed_specs(options: Any, state: dict[str, Any] | None) -> list[str]:
    """The spec-folder files that changed since the last build, by stat alone (every one
    without a state)."""
    current = spec_files(options.specs)
    if state is None:
        return list(current)
    recorded: dict[str, list[Any]] = state["inputs"]
    return [
        rel
        for rel, stat in current.items()
        if rel not in recorded or [stat.st_size, stat.st_mtime_ns] != recorded[rel][:2]
    ]


def snapshot_inputs(specs: Path, state: dict[str, Any] | None = None) -> Snapshot:
    """Every spec-folder file's size, mtime and SHA-256; a file whose size and mtime are what
    the last build (`state`) recorded keeps its recorded SHA-256, as the no-op path trusts."""
    recorded: dict[str, list[Any]] = state["inputs"] if state else {}
    snap = Snapshot()
    for rel, stat in sorted(spec_files(specs).items()):
        known = recorded.get(rel)
        if known is not None and known[:2] == [stat.st_size, stat.st_mtime_ns]:
            snap.inputs[rel] = list(known)
        elif rel.endswith("/"):  # a linked folder: where it points
            snap.inputs[rel] = [stat.st_size, stat.st_mtime_ns, sha(os.readlink(specs / rel[:-1]))]
        else:
            digest = sha((specs / rel).read_bytes())
            snap.inputs[rel] = [stat.st_size, stat.st_mtime_ns, digest]
    return snap


def unit_key(rel: str, spec_sha: str, reached: list[tuple[str, str]]) -> str:
    """What a spec's unit was made from, besides the build key: the spec file (its place and
    bytes) and every file its $refs reach (relative path, SHA-256)."""
    return sha(canonical(["unit", rel, spec_sha, reached]))


def load_state(options: Any) -> dict[str, Any] | None:
    """The last successful build's record, if it was made under this build key."""
    state = _load(options.out / CACHE_DIR / STATE)
    if state is None or state.get("key") != build_key(options):
        return None
    return state


# -- the no-op fast path ------------------------------------------------------------------------


@dataclass
class NoOp:
    diagnostics: list[list[Any]]  # [severity, formatted line]
    tools: int
    targets: int
    files: int  # generated files (the manifest not counted)
    budget: str = ""  # the build summary's token line


def build_key(options: Any) -> str:
    from toolnexus_gen.config.options import header_for

    return sha(
        canonical(
            {
                "generator": generator_fingerprint(),
                "specs": os.path.relpath(options.specs.resolve(), options.root),
                "out": os.path.relpath(options.out.resolve(), options.root),
                "targets": list(options.targets),
                "options": options.target_options,
                "ignore": sorted(options.ignore),
                "name_aliases": options.name_aliases,
                # the sources' settings, with where they stand (their diagnostics point there)
                "builtins": _setting(options.builtins),
                "skills": _setting(options.skills, options.root),
                "base_url": options.base_url,
                "profile": options.profile,
                "many": options.many.key(),
                "command": header_for(options).command,
                # diagnostics are recorded with paths relative to the working folder
                "cwd": os.getcwd(),
            }
        )
    )


def _setting(setting: Any, root: Path | None = None) -> Any:
    if setting is None:
        return None
    value = os.path.relpath(setting.value, root) if root is not None else setting.value
    return [value, setting.display, setting.line, setting.col]


def fast_noop(options: Any, state: dict[str, Any] | None, *, check: bool) -> NoOp | None:
    """The recorded result (state: load_state) when nothing changed since the last build; None
    means: run the build."""
    if state is None:
        return None
    recorded: dict[str, list[Any]] = state["inputs"]
    current = spec_files(options.specs)
    if current.keys() != recorded.keys():
        return None
    specs = str(options.specs)
    for rel, stat in current.items():
        if not _same(stat, recorded[rel], os.path.join(specs, rel)):
            return None
    if options.source_folders:
        sources: dict[str, list[Any]] = state.get("sources", {})
        found = source_files(options)
        if found.keys() != sources.keys():
            return None
        root = str(options.root)
        for rel, stat in found.items():
            if not _same(stat, sources[rel], os.path.join(root, rel)):
                return None
    outputs: dict[str, list[Any]] = state["outputs"]
    out = str(options.out)
    for rel, entry in outputs.items():
        path = os.path.join(out, rel)
        try:
            if check:  # exact: the bytes on disk are hashed, whatever their stat says
                with open(path, "rb") as handle:
                    if sha(handle.read()) != entry[2]:
                        return None
            elif not _same(os.stat(path), entry, path):
                return None
        except OSError:
            return None
    if not check and _extra_files(out, outputs):
        return None  # let the full build explain (a file it did not write, a symlink) or clean up
    return NoOp(
        state["diagnostics"],
        state["tools"],
        state["targets"],
        len(outputs) - 1,
        state.get("budget", ""),
    )


def _extra_files(out: str, outputs: dict[str, list[Any]]) -> bool:
    from toolnexus_gen.fs.output import LOCK, MANIFEST

    allowed = {*outputs, MANIFEST, LOCK}
    for root, dirs, names in os.walk(out):
        rel = os.path.relpath(root, out)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        if any(os.path.islink(os.path.join(root, d)) for d in dirs):
            return True
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            if prefix.startswith(CACHE_DIR + "/"):
                # In the cache, only a killed build's leftover counts: the full build removes it.
                if name.endswith(TMP_SUFFIX):
                    return True
            elif prefix + name not in allowed:
                return True
    return False


def save_state(
    options: Any,
    inputs: Snapshot,
    outputs: dict[str, list[Any]],
    diagnostics: list[list[Any]],
    tools: int,
    reuse: dict[str, Any],
    budget: str = "",
) -> None:
    """Record a successful build, under the output lock once its files are written: `outputs`
    is [size, mtime_ns, SHA-256] of each file as written (output.Report.recorded), `reuse`
    what lets the next build reuse parts of this one (reuse.records)."""
    body = {
        "key": build_key(options),
        "inputs": inputs.inputs,
        "sources": inputs.sources,
        "outputs": outputs,
        "diagnostics": diagnostics,
        "tools": tools,
        "targets": len(options.targets),
        "budget": budget,
        # each spec's model input (spec.load.model_input): read before any worker starts
        "models": {rel: unit.get("model_input") for rel, unit in reuse.get("units", {}).items()},
    }
    # Apart, so the no-op path reads only the small state; tied to it by the outputs' digest.
    _save(options.out / CACHE_DIR / UNITS, {"outputs": sha(canonical(outputs)), **reuse})
    _save(options.out / CACHE_DIR / STATE, body)


def load_reuse(options: Any, state: dict[str, Any]) -> dict[str, Any]:
    """What the build that wrote `state` left for the next one to reuse (empty when the file
    is missing, damaged, or from another build)."""
    body = _load(options.out / CACHE_DIR / UNITS)
    if body is None or body.get("outputs") != sha(canonical(state["outputs"])):
        return {}
    return body


# -- per-tool memo ------------------------------------------------------------------------------


class Memo:
    """Results of expensive per-tool work, by content key. Reads once, writes once."""

    def __init__(self, out: Path | None) -> None:
        self.path = out / CACHE_DIR / MEMO if out is not None else None
        body = _load(self.path) if self.path is not None else None
        self.valid: dict[str, bool] = dict((body or {}).get("valid", {}))
        self.models: dict[str, str] = dict((body or {}).get("models", {}))
        self.used_valid: set[str] = set()
        self.used_models: set[str] = set()

    def key(self, *parts: Any) -> str:
        return sha(canonical([generator_fingerprint(), *parts]))

    def is_valid(self, key: str) -> bool:
        if self.valid.get(key):
            self.used_valid.add(key)
            return True
        return False

    def mark_valid(self, key: str) -> None:
        self.valid[key] = True
        self.used_valid.add(key)

    def model(self, key: str) -> str | None:
        source = self.models.get(key)
        if source is not None:
            self.used_models.add(key)
        return source

    def store_model(self, key: str, source: str) -> None:
        self.models[key] = source
        self.used_models.add(key)

    def save(self) -> None:
        """Keep what this build used (so the memo does not grow without end)."""
        if self.path is None:
            return
        body = {
            "valid": {k: True for k in sorted(self.used_valid)},
            "models": {k: self.models[k] for k in sorted(self.used_models)},
        }
        _save(self.path, body)
