"""Content keys, and the memo: results of expensive per-tool work by content key.

Plain data. The build plan (incremental/) reads the memo once and saves what the build used
once; the stages in between look results up and add the ones they make, and never touch the
disk or the build state themselves.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def digest_each(keys: dict[str, Any]) -> dict[str, str]:
    """sha(canonical(key)) of each key, made once for a key that several names share (the
    package's files mostly share one)."""
    made: dict[int, str] = {}
    digests = {}
    for name, key in keys.items():
        found = made.get(id(key))
        if found is None:
            found = made[id(key)] = sha(canonical(key))
        digests[name] = found
    return digests


@dataclass
class Memo:
    """Schemas already found valid and model sources, by content key. Every key carries the
    generator's fingerprint (incremental.cache.generator_fingerprint), so a memo made by another
    generator never answers."""

    fingerprint: str = ""
    valid: dict[str, bool] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    used_valid: set[str] = field(default_factory=set)  # what this build looked up or added:
    used_models: set[str] = field(default_factory=set)  # all the saved memo keeps
    # each model source as memo.json holds it, beside the source it was read as: a memo saved
    # again keeps the lines of the sources it still holds (incremental.cache.save_memo)
    lines: dict[str, tuple[str, str]] = field(default_factory=dict)

    def key(self, *parts: Any) -> str:
        return sha(canonical([self.fingerprint, *parts]))

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


def unit_key(rel: str, spec_sha: str, reached: list[tuple[str, str]]) -> str:
    """What a spec's unit was made from, besides the build key: the spec file (its place and
    bytes) and every file its $refs reach (relative path, SHA-256)."""
    return sha(canonical(["unit", rel, spec_sha, reached]))
