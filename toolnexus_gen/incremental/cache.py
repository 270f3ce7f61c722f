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

import json
import os
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from toolnexus_gen import __version__
from toolnexus_gen.fs.paths import CACHE_DIR, SPEC_SUFFIXES, TMP_SUFFIX, folder_files
from toolnexus_gen.memo import Memo, canonical, sha

STATE = "state.json"
UNITS = "units.json"
MEMO = "memo.json"


@cache
def generator_fingerprint() -> str:
    """toolnexus-gen's version and source files, datamodel-code-generator's version, Python's.

    Read from the file system without importing anything (this runs on the no-op fast path).
    """
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package folder
    parts = [__version__, sys.version.split()[0], dist_version("datamodel_code_generator")]
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


def dist_version(module: str) -> str:
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


def _load(path: Path, checksum_of: str | None = None) -> dict[str, Any] | None:
    """A cache file's body, or None when missing, unreadable or not matching its checksum
    (nor `checksum_of`, when given: the one another file recorded for it)."""
    return _body(_read_checked(path, checksum_of))


def _read_checked(path: Path, checksum_of: str | None = None) -> bytes | None:
    """A cache file's text (after its checksum's line), when it matches that checksum (and
    `checksum_of`, when given)."""
    try:
        raw = path.read_bytes()
        checksum, _, text = raw.partition(b"\n")
        if checksum.decode("ascii") != sha(text) or checksum_of not in (None, checksum.decode()):
            return None
        return text
    except (OSError, UnicodeDecodeError):
        return None


def _body(text: bytes | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        body = json.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _encoded(body: dict[str, Any]) -> bytes:
    """A cache file's bytes: its checksum's line, then its body as JSON."""
    return _checksummed(_json(body).encode("utf-8"))


def _checksummed(text: bytes) -> bytes:
    return sha(text).encode("ascii") + b"\n" + text


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _save(path: Path, body: dict[str, Any] | bytes) -> None:
    from toolnexus_gen.fs.output import (
        atomic_write,
    )  # the one module that writes into the output folder

    atomic_write(path, body if isinstance(body, bytes) else _encoded(body))


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


def _same(
    stat: os.stat_result, recorded: list[Any], path: str, digests: dict[str, str] | None = None
) -> bool:
    """True when the file still has the recorded content (stat first, SHA-256 when stat differs;
    `digests` keeps the hashes made, for the snapshot that follows)."""
    if stat.st_size == recorded[0] and stat.st_mtime_ns == recorded[1]:
        return True
    if path.endswith("/"):
        return False
    try:
        with open(path, "rb") as handle:
            digest = sha(handle.read())
    except OSError:
        return False
    if digests is not None:
        digests[path] = digest
    return bool(digest == recorded[2])


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


def changed_specs(current: dict[str, os.stat_result], state: dict[str, Any] | None) -> list[str]:
    """The spec-folder files (`current`: spec_files) that changed since the last build, by stat
    alone (every one without a state)."""
    if state is None:
        return list(current)
    recorded: dict[str, list[Any]] = state["inputs"]
    return [
        rel
        for rel, stat in current.items()
        if rel not in recorded or [stat.st_size, stat.st_mtime_ns] != recorded[rel][:2]
    ]


def snapshot_inputs(
    specs: Path,
    current: dict[str, os.stat_result],
    state: dict[str, Any] | None = None,
    digests: dict[str, str] | None = None,
) -> Snapshot:
    """Every spec-folder file's size, mtime and SHA-256 (`current`: spec_files); a file whose
    size and mtime are what the last build (`state`) recorded keeps its recorded SHA-256, as the
    no-op path trusts."""
    recorded: dict[str, list[Any]] = state["inputs"] if state else {}
    digests = digests or {}
    snap = Snapshot()
    base = str(specs)
    for rel, stat in sorted(current.items()):
        known = recorded.get(rel)
        if known is not None and known[:2] == [stat.st_size, stat.st_mtime_ns]:
            snap.inputs[rel] = list(known)
        elif rel.endswith("/"):  # a linked folder: where it points
            snap.inputs[rel] = [stat.st_size, stat.st_mtime_ns, sha(os.readlink(specs / rel[:-1]))]
        else:
            path = os.path.join(base, rel)
            digest = digests.get(path) or sha((specs / rel).read_bytes())
            snap.inputs[rel] = [stat.st_size, stat.st_mtime_ns, digest]
    return snap


def load_state(options: Any, key: str) -> dict[str, Any] | None:
    """The last successful build's record, if it was made under this build key."""
    state = _load(options.out / CACHE_DIR / STATE)
    if state is None or state.get("key") != key:
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
                "codegen_keywords": options.codegen_keywords,
                # the sources' settings, with where they stand (their diagnostics point there)
                "builtins": _setting(options.builtins),
                "skills": _setting(options.skills, options.root),
                "base_url": options.base_url,
                "profile": options.profile,
                "many": options.many.key(),
                "overrides": options.curated.key(),
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


def fast_noop(
    options: Any,
    state: dict[str, Any] | None,
    current: dict[str, os.stat_result],
    *,
    check: bool,
    digests: dict[str, str] | None = None,
) -> NoOp | None:
    """The recorded result (state: load_state) when nothing changed since the last build
    (`current`: spec_files); None means: run the build."""
    if state is None:
        return None
    recorded: dict[str, list[Any]] = state["inputs"]
    if current.keys() != recorded.keys():
        return None
    specs = str(options.specs)
    for rel, stat in current.items():
        if not _same(stat, recorded[rel], os.path.join(specs, rel), digests):
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
    key: str,
    inputs: Snapshot,
    outputs: dict[str, list[Any]],
    diagnostics: list[list[Any]],
    tools: int,
    reuse: dict[str, Any],
    budget: str = "",
    before: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Record a successful build, under the output lock once its files are written: `outputs`
    is [size, mtime_ns, SHA-256] of each file as written (output.Report.recorded), `reuse`
    what lets the next build reuse parts of this one (reuse.records). Returns the two bodies
    saved (state.json's and units.json's, with its lines: LINES). `before`: what the last
    build kept (load_reuse), whose lines are kept for the records kept as they were."""
    before = before or {}
    data, lines = _units_file(reuse, before.get("units", {}), before.get(LINES, {}))
    body = {
        "key": key,
        "inputs": inputs.inputs,
        "sources": inputs.sources,
        "outputs": outputs,
        "diagnostics": diagnostics,
        "tools": tools,
        "targets": len(options.targets),
        "budget": budget,
        # each spec's model input (spec.load.model_input): read before any worker starts
        "models": {rel: unit.get("model_input") for rel, unit in reuse.get("units", {}).items()},
        # apart, so the no-op path reads only the small state; tied to it by its checksum
        "units": data.partition(b"\n")[0].decode("ascii"),
    }
    _save(options.out / CACHE_DIR / UNITS, data)
    _save(options.out / CACHE_DIR / STATE, body)
    return body, {**reuse, LINES: lines}


# units.json is one JSON document, each unit's record on a line of its own: a build keeps the
# lines of the records it kept as they were (reuse.records), rather than encoding a thousand of
# them again. The lines read or written are kept beside the records, under this key (never saved).
LINES = "lines"


def _units_file(
    reuse: dict[str, Any], old_units: dict[str, Any], old_lines: dict[str, str]
) -> tuple[bytes, dict[str, str]]:
    """units.json's bytes, and the line of each unit's record (`old_units`, `old_lines`: the
    records the last build kept, and their lines)."""
    lines = {}
    for rel, record in reuse["units"].items():
        line = old_lines.get(rel)
        if line is None or old_units.get(rel) is not record:
            line = _line(rel, record)
        lines[rel] = line
    head = _json({"package": reuse["package"], "layout": reuse["layout"]})
    text = f'{head[:-1]},"units":{{\n' + ",\n".join(lines.values()) + "\n}}"
    return _checksummed(text.encode("utf-8")), lines


def load_reuse(options: Any, state: dict[str, Any]) -> dict[str, Any]:
    """What the build that wrote `state` left for the next one to reuse (empty when the file
    is missing, damaged, or from another build), with the line of each record (LINES)."""
    recorded = state.get("units")
    if not isinstance(recorded, str):
        return {}
    path = options.out / CACHE_DIR / UNITS
    text = _read_checked(path, recorded)
    body = _body(text)
    if text is None or body is None:
        return {}
    units = body.get("units")
    found = _lines(text, units) if isinstance(units, dict) else {}
    body[LINES] = {rel: line for rel, (_, line) in found.items()}
    return body


# -- per-tool memo ------------------------------------------------------------------------------


def load_memo(out: Path) -> Memo:
    """The memo the last build kept (empty when missing or damaged), with the line of each model
    source (Memo.lines), as units.json's records (load_reuse)."""
    text = _read_checked(out / CACHE_DIR / MEMO)
    body = _body(text) or {}
    memo = Memo(generator_fingerprint(), dict(body.get("valid", {})), dict(body.get("models", {})))
    if text is not None and memo.models:
        memo.lines = _lines(text, memo.models)
    return memo


def save_memo(out: Path, memo: Memo) -> None:
    """Keep what this build used (so the memo does not grow without end): one JSON document,
    each model source on a line of its own, those read from memo.json kept as they were."""
    valid = _json({k: True for k in sorted(memo.used_valid)})
    lines = []
    for key in sorted(memo.used_models):
        source = memo.models[key]
        read = memo.lines.get(key)
        lines.append(read[1] if read is not None and read[0] is source else _line(key, source))
    text = f'{{"valid":{valid},"models":{{\n' + ",\n".join(lines) + "\n}}"
    _save(out / CACHE_DIR / MEMO, _checksummed(text.encode("utf-8")))


def _line(key: str, value: Any) -> str:
    return f"{_json(key)}:{_json(value)}"


def _lines(text: bytes, entries: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """The line of each of `entries` (the last object of the document `text`, one entry on
    each of its lines but the first and the last), with its value; empty when the text is not
    laid out so."""
    try:
        parts = text.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return {}
    if len(parts) != len(entries) + 2:
        return {}
    found = {}
    for (key, value), line in zip(entries.items(), parts[1:-1], strict=True):
        line = line.removesuffix(",")
        # its key as _line writes it (json.dumps escapes only ", \\ and controls)
        plain = key.isprintable() and '"' not in key and "\\" not in key
        if not line.startswith(f'"{key}":' if plain else f"{_json(key)}:"):
            return {}
        found[key] = (value, line)
    return found
