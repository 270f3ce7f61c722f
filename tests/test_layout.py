"""The generator's house: stages a reader can name from the folder listing, imports in one
direction (no circle, counting lazy and TYPE_CHECKING imports and the registry's own), one
catalogue behind `explain` and the docs' diagnostics page."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "toolnexus_gen"
# Lowest first: a module may import its own layer or a lower one, never a higher one.
LAYERS = [
    {"toolnexus_gen", "ir", "diagnostics", "fs", "memo", "parallel", "progress"},
    {"config", "targets.registry"},
    {"incremental"},
    {"toolspec"},
    {"targets"},
    {"codegen"},
    {"pipeline"},
    {"breaking"},  # the tool surface then and now (sync --check reports through its rules)
    {"sources"},  # in front of the pipeline: the pipeline never imports a source
    {"commands"},
    {"session"},
    {"cli", "__main__"},
]


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: relative import (the house uses absolute ones)"
                # `from pkg import sub` depends on the module pkg.sub; `from mod import name`
                # on mod.
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    graph[name].add(target)
    # TARGETS imports each target's module by name (importlib) on first use.
    from toolnexus_gen.targets.registry import NAMES

    graph["toolnexus_gen.targets"] |= {f"toolnexus_gen.targets.{n}" for n in NAMES}
    return graph


def layer(module: str) -> int:
    short = module.removeprefix("toolnexus_gen.") if module != "toolnexus_gen" else module
    best = None
    for rank, names in enumerate(LAYERS):
        for prefix in names:
            if short == prefix or short.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    assert best is not None, f"{module} is in no layer: add it to LAYERS and to docs/design.md"
    return best[0]


def test_the_import_graph_has_no_circle() -> None:
    found = _circle(imports())
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_imports_go_down_the_layers() -> None:
    upward = [
        f"{module} -> {target}"
        for module, targets in imports().items()
        for target in targets
        if layer(target) > layer(module)
    ]
    assert upward == []


def test_the_folder_listing_names_the_stages() -> None:
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
    assert packages == [
        "breaking",
        "codegen",
        "commands",
        "config",
        "diagnostics",
        "fs",
        "incremental",
        "pipeline",
        "sources",
        "targets",
        "toolspec",
    ]
    for name in packages:  # each says what it holds
        assert ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))


def test_the_catalogue_script_leaves_a_file_without_a_rule_table_alone(tmp_path: Path) -> None:
    """The docs render every rule at build time (tests/test_docs.py checks the page); the old
    `python -m toolnexus_gen.diagnostics.catalogue FILE` still rewrites a table a file holds."""
    import subprocess
    import sys

    from toolnexus_gen.diagnostics.catalogue import README_END, README_START, rule_table

    plain, marked = tmp_path / "plain.md", tmp_path / "marked.md"
    plain.write_text("# no table\n")
    marked.write_text(f"{README_START}\nold\n{README_END}\n")
    for path in (plain, marked):
        module = "toolnexus_gen.diagnostics.catalogue"
        subprocess.run([sys.executable, "-m", module, str(path)], check=True, capture_output=True)
    assert plain.read_text() == "# no table\n"
    assert marked.read_text() == f"{README_START}\n{rule_table()}{README_END}\n"


def test_the_command_line_starts_light() -> None:
    """`--version`, option errors and the no-op build import none of the pipeline."""
    import subprocess
    import sys

    code = (
        "import sys, toolnexus_gen.cli\n"
        "heavy = ('yaml', 'jsonschema', 'jinja2', 'referencing', 'toolnexus_gen.toolspec.load',\n"
        "         'toolnexus_gen.targets.base', 'toolnexus_gen.pipeline.build')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def bench_imports() -> dict[str, set[str]]:
    """bench/ script -> the bench/ modules it imports (the scripts import each other by name:
    their folder is on sys.path), wherever the import statement is."""
    folder = ROOT / "bench"
    known = {path.stem for path in folder.glob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name in known:
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found = {node.module.split(".")[0]}
            else:
                continue
            graph[name] |= (found & known) - {name}
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_benchmarks_import_each_other_without_a_circle() -> None:
    graph = bench_imports()
    assert {"synthetic", "seed_loop"} <= set(graph["run"]) | set(graph["seed_loop_mcp"])
    assert _circle(graph) is None, " -> ".join(_circle(graph) or [])
    # and the check finds one where there is one
    planted = _circle({**graph, "synthetic": {"run"}})
    assert planted is not None and {"run", "synthetic"} <= set(planted)
