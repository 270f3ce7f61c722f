"""Generated imports and `__all__` lists are in the order ruff wants, whatever the tool names:
isort (I001) sorts the members of one import by type and then ignoring case (GetAnAlbumArgs
before GetAShowArgs), RUF022 sorts `__all__` by type and then case-sensitively (the other way
round), both in natural order (X2 before X10). Checked by running ruff itself."""

from __future__ import annotations

import keyword
import subprocess
import sysconfig
from pathlib import Path

import pytest
from conftest import cli, write_specs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from toolnexus_gen.codegen.package import import_sorted, module_sorted, ruff_sorted

RUFF = str(Path(sysconfig.get_path("scripts")) / "ruff")
SPEC = {
    "description": "t",
    "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
}
# Spotify's OpenAPI operations (get-an-album, get-a-show) and other shapes that once broke it
NAMES = [
    "get_an_album",
    "get_a_show",
    "GET_X",
    "get_x2",
    "get_x10",
    "get_x02",
    "a_b",
    "ab",
    "Ab_c",
    "x",
    "getURL",
    "get_url_2",
    "_private",
    "tool__double",
]


def ruff_check(folder: Path, *files: str) -> subprocess.CompletedProcess[str]:
    """ruff with its defaults, then with isort and RUF022 on top; the first failure wins."""
    for rules in ([], ["--extend-select", "I,RUF022"]):
        result = subprocess.run(
            [RUFF, "check", "--isolated", "--no-cache", *rules, *files],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            return result
    return result


def build_and_check(root: Path, names: list[str], *, collisions_allowed: bool = False) -> None:
    write_specs(root / "specs", {f"{name}.yaml": SPEC for name in names})
    result = cli("build", "specs", "--out", "tools", cwd=root)
    if collisions_allowed:
        assume(result.exit_code == 0)  # names that collide (TN116) are rejected, rightly
    assert result.exit_code == 0, result.stderr
    scaffold = cli("scaffold", "my_handlers.py", "--specs", "specs", "--out", "tools", cwd=root)
    assert scaffold.exit_code == 0, scaffold.output
    check = ruff_check(root, "tools", "my_handlers.py")
    assert check.returncode == 0, check.stdout + check.stderr


def test_package_with_mixed_case_and_numbered_names_passes_ruff(tmp_path: Path) -> None:
    build_and_check(tmp_path, NAMES)
    handlers = (tmp_path / "tools/handlers.py").read_text()
    # the import ignores case, __all__ does not: the two orders differ for these names
    assert handlers.index("GetAnAlbumArgs,") < handlers.index("GetAShowArgs,")
    models = (tmp_path / "tools/models/__init__.py").read_text()
    assert models.index('"GetAShowArgs"') < models.index('"GetAnAlbumArgs"')


def test_a_folder_of_fragments_only_scaffolds_handlers_that_pass_ruff(tmp_path: Path) -> None:
    """`_.yaml` is a shared fragment: no tools, so the stub imports only the base class."""
    build_and_check(tmp_path, ["_"])
    assert "from tools import ToolHandlers\n" in (tmp_path / "my_handlers.py").read_text()


tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(names=st.lists(tool_names, min_size=1, max_size=8, unique_by=str.lower))
def test_any_tool_names_build_a_package_that_passes_ruff(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    build_and_check(tmp_path_factory.mktemp("names"), names, collisions_allowed=True)


# Identifiers as ruff sees them: any case, digits (leading zeros too), underscores; never a
# keyword (`is` cannot be imported; generated names end in Args, Output, ... and never are one).
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: name != "_" and not keyword.iskeyword(name)
)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(identifiers, min_size=2, max_size=12, unique=True))
def test_sorted_names_are_the_order_ruff_wants(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    """The three orders against ruff directly, on names far odder than tools make."""
    modules = module_sorted([(name.lower() + f"_{i}", name) for i, name in enumerate(names)])
    lines = [
        "from m import (",
        *(f"    {name}," for name in import_sorted(names)),
        ")",
        "",
        *(f"from .{module} import {name}" for module, name in modules),
        "",
        "__all__ = [",
        *(f'    "{name}",' for name in ruff_sorted(names)),
        "]",
        "",
    ]
    folder = tmp_path_factory.mktemp("order")
    (folder / "order.py").write_text("\n".join(lines))
    result = subprocess.run(
        [RUFF, "check", "--isolated", "--no-cache", "--select", "I,RUF022", "order.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + "\n".join(lines)


@pytest.mark.parametrize("length", [20, 55])
def test_a_one_tool_toolset_entry_is_split_as_ruff_format_splits_it(
    tmp_path: Path, length: int
) -> None:
    # Slack's admin_conversations_ekm toolset: its one tool fit in 100 columns, not in ruff's 88
    from toolnexus_gen.codegen.package import toolset_entry

    entry = toolset_entry(("admin_conversations_ekm", ("t" * length,)))
    source = tmp_path / "dispatch.py"
    source.write_text(f"TOOLSETS = {{\n    **{{\n{entry}\n    }}\n}}\n")
    done = subprocess.run(
        [RUFF, "format", "--isolated", "--check", "--diff", str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (entry.count("\n") == 0) == (length == 20)


def _natord(a: str, b: str) -> int:
    """The natord crate's comparison, step by step (the reference `natural_key` must agree
    with): digit runs compare as numbers, or left-aligned when either starts with 0."""
    i = j = 0
    while True:
        ca, cb = a[i : i + 1], b[j : j + 1]
        if ca.isascii() and cb.isascii() and ca.isdigit() and cb.isdigit():
            run_a = len(a[i:]) - len(a[i:].lstrip("0123456789"))
            run_b = len(b[j:]) - len(b[j:].lstrip("0123456789"))
            da, db = a[i : i + run_a], b[j : j + run_b]
            if ca == "0" or cb == "0":
                result = (da > db) - (da < db)  # left-aligned: as strings
            else:
                result = (len(da) > len(db)) - (len(da) < len(db)) or (da > db) - (da < db)
            if result:
                return result
            i, j = i + run_a, j + run_b
            continue
        if not ca and not cb:
            return 0
        if ca != cb:
            return -1 if ca < cb else 1
        i, j = i + 1, j + 1


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet="aZ_-00123456789é", max_size=8), max_size=30))
def test_the_natural_key_sorts_as_natord_compares(names: list[str]) -> None:
    from functools import cmp_to_key

    from toolnexus_gen.codegen.package import natural_key

    assert sorted(names, key=natural_key) == sorted(names, key=cmp_to_key(_natord))
