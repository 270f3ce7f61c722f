"""The runtime's version, and the check a generated package makes when it is imported."""

from __future__ import annotations

__version__ = "0.1.0"


def check_runtime(package: str, minimum: str, below: str) -> None:
    """Raise ImportError unless this runtime is in [minimum, below), naming both versions.

    Generated packages call this when they are imported (as protobuf's generated modules do), so
    a package generated for another runtime fails at once with the fix, not later with an
    AttributeError. Versions compare as PEP 440 says, as pip would: 0.2.0rc1 comes before 0.2.0,
    and `<0.3` excludes 0.3's own pre-releases."""
    from packaging.specifiers import SpecifierSet

    if not SpecifierSet(f">={minimum},<{below}").contains(__version__, prereleases=True):
        raise ImportError(
            f"{package} was generated for toolnexus-runtime>={minimum},<{below}, but "
            f"toolnexus-runtime {__version__} is installed. Install a matching runtime "
            f"(pip install 'toolnexus-runtime>={minimum},<{below}') or regenerate the package "
            "with a toolnexus-gen that matches this runtime."
        )
