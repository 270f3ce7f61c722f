"""The runtime's version, and the check a generated package makes when it is imported."""

from __future__ import annotations

__version__ = "0.1.0"


def _parse(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if not part.isdigit() else part
        if not digits:
            break
        parts.append(int(digits))
        if digits != part:  # 1.2.0rc1: stop at the pre-release
            break
    return tuple(parts)


def check_runtime(package: str, minimum: str, below: str) -> None:
    """Raise ImportError unless this runtime is in [minimum, below), naming both versions.

    Generated packages call this when they are imported (as protobuf's generated modules do), so
    a package generated for another runtime fails at once with the fix, not later with an
    AttributeError."""
    if not _parse(minimum) <= _parse(__version__) < _parse(below):
        raise ImportError(
            f"{package} was generated for toolnexus-runtime>={minimum},<{below}, but "
            f"toolnexus-runtime {__version__} is installed. Install a matching runtime "
            f"(pip install 'toolnexus-runtime>={minimum},<{below}') or regenerate the package "
            "with a toolnexus-gen that matches this runtime."
        )
