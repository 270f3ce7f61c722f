"""A build's plan, made once from the last build's record, and that record saved once.

`plan()` reads the record (from the cache files, or as the last build in this process left it),
walks the spec folder once, and says what changed, what to reuse and what to make: the no-op
answer when nothing changed; otherwise every input's digest, the units the stages need not make
again, the package files and keys the renderer may take back, and the memo. The stages run over
the plan and never come back here; `save()` records the build once its files are written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolnexus_gen.fs.paths import CACHE_DIR
from toolnexus_gen.incremental import cache
from toolnexus_gen.incremental.reuse import Texts, records, reusable_units
from toolnexus_gen.ir import Contribution, Unit
from toolnexus_gen.memo import Memo


@dataclass
class Record:
    """What the last successful build left for the next one: state.json and units.json's
    bodies, the memo, and (in the process that made it) the files it wrote, so a build in the
    same process (`build --watch`) reads none of it back from disk."""

    state: dict[str, Any] | None
    kept: dict[str, Any] = field(default_factory=dict)
    memo: Memo = field(default_factory=Memo)
    written: dict[str, str] | None = None
    units: dict[str, Unit] = field(default_factory=dict)  # the units it made or took back
    checked: dict[str, Any] = field(default_factory=dict)  # reuse.reusable_units's `verified`
    memo_kept: tuple[frozenset[str], frozenset[str]] | None = None  # what memo.json holds
    assembled: dict[str, Any] = field(default_factory=dict)  # render.Rendered.assembled
    specs: Path | None = None  # the spec folder the paths are in
    paths: dict[str, Path] = field(default_factory=dict)  # Plan.paths by Plan.rels


@dataclass
class Plan:
    key: str  # the build key (configuration and generator)
    noop: cache.NoOp | None = None  # nothing changed: the last build's answer
    inputs: cache.Snapshot = field(default_factory=cache.Snapshot)  # what save() records
    changed: list[str] = field(default_factory=list)  # spec-folder files changed since
    models: dict[str, str | None] = field(default_factory=dict)  # each spec's model input then
    paths: list[Path] = field(default_factory=list)  # the tool specs (not `_`/`.` fragments)
    rels: list[str] = field(default_factory=list)  # each one's path in the spec folder
    contribution: Contribution = field(default_factory=Contribution)  # the in-memory sources'
    reused: list[Unit] = field(default_factory=list)  # units taken back from the last build
    package: dict[str, str] = field(default_factory=dict)  # package keys then (name: digest)
    texts: dict[str, str] = field(default_factory=dict)  # package files then, still as written
    memo: Memo = field(default_factory=Memo)
    outputs: dict[str, list[Any]] = field(default_factory=dict)  # the files written then
    units: dict[str, Any] = field(default_factory=dict)  # what was recorded of each unit then
    kept: dict[str, Any] = field(default_factory=dict)  # all of it (cache.load_reuse)
    checked: dict[str, Any] = field(default_factory=dict)  # Record.checked, for the next one
    first: bool = True  # no usable record: every spec (the sources' too) is made afresh
    memo_kept: tuple[frozenset[str], frozenset[str]] | None = None  # Record.memo_kept
    written: dict[str, str] | None = None  # Record.written: the files as last written here
    assembled: dict[str, Any] = field(default_factory=dict)  # Record.assembled


def plan(
    options: Any,
    *,
    check: bool = False,
    contribute: Callable[[], Contribution] | None = None,
    last: Record | None = None,
    entries: bool = True,
    ready: Callable[[Plan], None] | None = None,
    noop: bool = True,
) -> Plan:
    """The plan of a build of `options` (BuildOptions). `contribute` asks the in-memory sources
    what they add; it is called once the files they read are recorded, so the record never
    claims an edit made while they were read. `last`: the record the previous build in this
    process saved (None: read it from the cache files). `entries=False`: nothing will be
    rendered (`list`), so reused units need neither their provider entries nor their models,
    and there is no no-op answer: every unit is wanted. `ready(plan)` is told what changed (and
    what the sources contribute) before the rest of the record is read: the build's workers
    start then, while this process is small. `noop=False`: no no-op answer either, the files
    are wanted in memory (`breaking`), made over what the last build left."""
    key = cache.build_key(options)
    if last is None:
        state = cache.load_state(options, key)
    else:
        state = last.state if last.state is not None and last.state.get("key") == key else None
    current = cache.spec_files(options.specs)  # the spec folder's one walk
    digests: dict[str, str] = {}
    made = Plan(key)
    if entries and noop:
        made.noop = cache.fast_noop(options, state, current, check=check, digests=digests)
        if made.noop is not None:
            return made
    made.changed = cache.changed_specs(current, state)
    made.inputs = cache.snapshot_inputs(options.specs, current, state, digests)  # before reading
    made.inputs.sources = cache.snapshot_sources(options, state)
    made.contribution = contribute() if contribute is not None else Contribution()
    if state is not None:
        made.first, made.models = False, state.get("models", {})
    if ready is not None:
        ready(made)
    rels = [  # the tool specs: not the `_`/`.` shared fragments, not linked folders
        rel
        for rel in made.inputs.inputs  # sorted
        if not rel.endswith("/")
        and not rel.startswith(("_", "."))
        and "/_" not in rel
        and "/." not in rel
    ]
    # the last build's paths, while they name the same folder (a Path costs more than its stat)
    known = last.paths if last is not None and last.specs == options.specs else {}
    made.rels, made.paths = rels, [known.get(rel) or options.specs / rel for rel in rels]
    memo: Memo | None
    if last is not None:
        memo, kept, written = last.memo, last.kept if state else {}, last.written
        made.memo_kept = last.memo_kept if state else None  # the same key: the same folder
        made.assembled = last.assembled  # spliced into only where the skeleton is the same
    else:
        kept = cache.load_reuse(options, state) if state else {}
        # `list` wants the memo only for the specs it makes afresh (below)
        memo, written = _loaded(made, cache.load_memo(options.out)) if entries else None, None
    if state is None:
        made.memo = memo or _loaded(made, cache.load_memo(options.out))
        made.memo.used_valid, made.memo.used_models = set(), set()
        return made
    if memo is not None:
        memo.used_valid, memo.used_models = set(), set()
        made.memo = memo
    made.written = written
    made.kept = kept
    made.units = kept.get("units", {})
    made.outputs = state.get("outputs", {})
    texts = Texts(options.out, made.outputs, written, exact=check)
    made.reused = reusable_units(
        options.specs,
        made.inputs.inputs,
        kept,
        made.memo,
        texts,
        rels,
        made.contribution.specs,
        entries=entries,
        in_memory=last.units if last is not None else None,
        checked=last.checked if last is not None else None,
        verified=made.checked,
    )
    if memo is None and len(made.reused) < len(made.paths) + len(made.contribution.specs):
        made.memo = _loaded(made, cache.load_memo(options.out))
    package = kept.get("package")
    if entries and isinstance(package, dict):
        made.package = package
        for name in package:
            text = texts.get(name)
            if text is not None:
                made.texts[name] = text
    return made


def _loaded(made: Plan, memo: Memo) -> Memo:
    """The memo as read from memo.json: what the file holds is known (Plan.memo_kept)."""
    made.memo_kept = (frozenset(memo.valid), frozenset(memo.models))
    return memo


def save(
    options: Any,
    made: Plan,
    *,
    units: list[Unit],
    layout: dict[str, dict[str, tuple[int, int]]],
    package: dict[str, str],
    diagnostics: list[list[Any]],
    tools: int,
    budget: str,
    outputs: dict[str, list[Any]],
    written: dict[str, str],
    assembled: dict[str, Any] | None = None,
) -> Record:
    """Record a build whose files (`written`) were just written, under the output lock:
    `outputs` is [size, mtime_ns, SHA-256] of each as left on disk (output.Report.recorded).
    Returns the record, for the next build in this process."""
    memo = made.memo
    kept_memo = Memo(
        memo.fingerprint,
        {key: True for key in memo.used_valid},
        {key: memo.models[key] for key in memo.used_models},
    )
    used = (frozenset(memo.used_valid), frozenset(memo.used_models))
    # memo.json is keyed by content: when this build used what the last one in this process
    # saved, the file already says it (`build --watch` after an edit that made no model)
    if used != made.memo_kept or not (options.out / CACHE_DIR / cache.MEMO).exists():
        cache.save_memo(options.out, made.memo)
    reuse = records(units, layout, package, made.units)
    state, kept = cache.save_state(
        options, made.key, made.inputs, outputs, diagnostics, tools, reuse, budget, made.kept
    )
    taken = {unit.rel: replace(unit, model_job=None) if unit.model_job else unit for unit in units}
    paths = dict(zip(made.rels, made.paths, strict=True))
    return Record(
        state,
        kept,
        kept_memo,
        written,
        taken,
        made.checked,
        used,
        assembled or {},
        options.specs,
        paths,
    )
