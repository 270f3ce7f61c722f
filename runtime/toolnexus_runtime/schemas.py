"""A generated package's provider schema files (`schemas/<target>.json`), read once each.

It imports nothing of the runtime: the toolkit, the toolsets and a generated package's module
functions all read schemas through it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def _schema_text(package: str, target: str) -> str | None:
    path = resources.files(package) / "schemas" / f"{target}.json"
    return path.read_text("utf-8") if path.is_file() else None


def load_schema(package: str, target: str) -> Any:
    """A generated package's `schemas/<target>.json`, parsed afresh (callers may change it)."""
    text = _schema_text(package, target)
    if text is None:
        raise NotImplementedError(f"{package} was generated without the {target} target")
    return json.loads(text)
