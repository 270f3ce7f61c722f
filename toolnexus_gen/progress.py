"""Progress of long work, as the work reports it: the command line shows it on a terminal (a
bar, once the work has taken a second) and nowhere else. Work that takes one reports each step
it finishes; it never prints."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def __call__(self, step: str, done: int, total: int | None = None) -> None:
        """`done` of `total` (None: not known) in `step` ("specs", "models", "operations"...)."""


def unseen(step: str, done: int, total: int | None = None) -> None:
    """No one is looking."""
