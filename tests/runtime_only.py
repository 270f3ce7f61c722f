"""Run Python code that may import only what a generated package's user has: the standard
library, pydantic (and what it needs), toolnexus-runtime and the package itself. Any other
import raises ImportError, as it would where only `pip install toolnexus-runtime` was run (the
test venv holds the generator, the provider SDKs and more, which would hide a missing one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ALLOWED = (
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "typing_inspection",
    "toolnexus_runtime",
    "anyio",  # the runtime's one optional dependency beside pydantic
    "sniffio",
    "idna",
    "exceptiongroup",
    "packaging",
)

GUARD = """
import importlib.abc, sys
ALLOWED = set({allowed!r}) | set(sys.stdlib_module_names) | set({packages!r})
class Guard(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in ALLOWED and not top.startswith("_"):
            raise ImportError(f"{{name}} is not installed where only the runtime is")
        return None
sys.meta_path.insert(0, Guard())
"""


def run(code: str, cwd: Path, packages: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (from `cwd`) whose imports are limited as said above;
    `packages`: the generated packages (and modules of the test) it may import too."""
    guard = GUARD.format(allowed=ALLOWED, packages=packages)
    return subprocess.run(
        [sys.executable, "-c", guard + code],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
