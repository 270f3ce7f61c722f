"""The build's worker processes: whether a build needs them, and opening them. Light on purpose
(nothing of the pipeline is imported): they are opened as soon as the plan knows what changed,
while this process is still small, so the less it has imported by then, the sooner they start
on datamodel-code-generator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolnexus_gen.parallel import pool_for

_first_build = True  # see workers()


@contextmanager
def workers(
    specs: Path,
    first: bool,
    changed: Sequence[str],
    models: dict[str, str | None],
    contributed: int,
    memo_left: bool = False,
) -> Iterator[None]:
    """Worker processes for the specs a build makes afresh (`changed`: the spec-folder files
    changed since the last build, `models`: each one's model input then, `first`: there is no
    last build, so the sources' `contributed` specs are made afresh too), opened as soon as the
    plan knows what changed (incremental.plan's `ready`): while this process is small, before it
    reads the rest of the record. They import datamodel-code-generator while this process reads
    and checks the specs. For a few specs that only pays in a process's first build (a command
    line run); a process that builds again imports the generator itself, once, and reuses it.
    `memo_left`: a first build finds a memo in the output folder (what `import openapi` leaves:
    the models of the specs it wrote), so the models may all be known; the workers are then
    opened only when a model is found missing, if ever."""
    global _first_build
    fresh = 0 if not first and _same_models(specs, changed, models) else len(changed)
    if first:
        fresh += contributed
    warm_few, _first_build = _first_build, False
    with pool_for(fresh, _warm_up, warm_few=warm_few, deferred=first and memo_left):
        yield


def _warm_up() -> None:
    """A worker's start (codegen.models, imported there: not here, before the fork)."""
    from toolnexus_gen.codegen.models import warm_up

    warm_up()


def _same_models(specs: Path, changed: Sequence[str], models: dict[str, str | None]) -> bool:
    """Whether every changed spec file is one the last build made a unit of, with the same model
    input (an edit of its description, examples, title...): then no model can change, and no
    worker needs to start datamodel-code-generator."""
    from toolnexus_gen.toolspec.digest import model_input

    for rel in changed:
        if models.get(rel) is None:
            return False
        path = specs / rel
        try:
            if rel.endswith(".json"):  # without importing the YAML loader
                data = json.loads(path.read_bytes())
            else:
                from toolnexus_gen.toolspec.load import LoadError, load_document

                try:
                    data = load_document(path).data
                except LoadError:
                    return False
        except (OSError, ValueError):
            return False
        if model_input(data) != models[rel]:
            return False
    return True
