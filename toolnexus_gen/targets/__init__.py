"""The provider targets: one module per provider, each exporting its `Target` (`TARGET`: file,
entry rendering, checks, import reader), the registry of their names and options
(`registry.py`), and `TARGETS`, which imports a target's module the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

from toolnexus_gen.targets.registry import INFO, NAMES

if TYPE_CHECKING:  # light on purpose: importing the registry runs this file
    from toolnexus_gen.targets.base import Target


class _Targets(Mapping[str, "Target"]):
    """Each target's `Target`, its module imported on first use."""

    def __init__(self) -> None:
        self._loaded: dict[str, Target] = {}

    def __getitem__(self, name: str) -> Target:
        if name not in self._loaded:
            if name not in INFO:
                raise KeyError(name)
            target: Target = import_module(f"toolnexus_gen.targets.{name}").TARGET
            self._loaded[name] = target
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in INFO

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


TARGETS = _Targets()
