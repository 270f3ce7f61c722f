"""The runtime's house: imports in one direction (no circle, counting lazy and TYPE_CHECKING
imports and the executors' registry of kinds), every module small enough to read in one
sitting, and the names generated packages import still where they import them from."""

from __future__ import annotations

import ast
from pathlib import Path

import toolnexus_runtime
from toolnexus_runtime.executors import KINDS

PACKAGE = Path(toolnexus_runtime.__file__).resolve().parent
MAX_LINES = 500
# Being split right now by the developers who own them; the lead removes each entry when its
# split lands (and the test then holds them to MAX_LINES too).
TEMPORARY_EXCEPTIONS = {"executors/mcp.py", "executors/http.py", "mcp.py"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["toolnexus_runtime", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports() -> dict[str, set[str]]:
    """module -> the runtime modules it imports, wherever the import statement is (top level,
    inside a function, under TYPE_CHECKING)."""
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    module = ".".join([*base, node.module] if node.module else base)
                else:
                    module = node.module or ""
                # `from pkg import sub` depends on the module pkg.sub; `from mod import name`
                # on mod (as in the generator's tests/test_layout.py).
                targets = [f"{module}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    graph[name].add(target)
    # make_executor imports each kind's module by name (importlib) when a table uses it.
    graph["toolnexus_runtime.executors"] |= set(KINDS.values())
    return graph


def test_the_collector_sees_every_kind_of_import() -> None:
    """The checks below are only as good as the graph: relative, lazy and TYPE_CHECKING
    imports are all edges, and the executors reach their kinds' modules."""
    graph = imports()
    assert "toolnexus_runtime.executors.mcp" in graph["toolnexus_runtime.executors"]
    assert "toolnexus_runtime.tracing" in graph["toolnexus_runtime.toolkit"]  # in a function
    assert (
        "toolnexus_runtime.datatypes" in graph["toolnexus_runtime.executors.base"]
    )  # TYPE_CHECKING
    assert "toolnexus_runtime.datatypes" in graph["toolnexus_runtime.providers.openai"]  # ..


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_circle() -> None:
    found = circle(imports())
    assert found is None, "import circle: " + " -> ".join(found or [])


def test_a_circle_is_found() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None


def test_the_data_types_import_nothing_of_the_runtime() -> None:
    graph = imports()
    for module in ("toolnexus_runtime.datatypes", "toolnexus_runtime.schemas"):
        assert graph[module] == set(), module


def test_every_module_is_under_the_line_limit() -> None:
    over = {}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text("utf-8").splitlines())
        if lines >= MAX_LINES and relative not in TEMPORARY_EXCEPTIONS:
            over[relative] = lines
    assert over == {}


def test_the_temporary_exceptions_name_real_files() -> None:
    for relative in TEMPORARY_EXCEPTIONS:  # a stale entry is removed, not kept
        assert (PACKAGE / relative).is_file(), relative


def test_the_names_generated_packages_import_are_still_there() -> None:
    """A package generated by an earlier toolnexus-gen imports these (templates/python/):
    upgrading the runtime must not break it."""
    import toolnexus_runtime.mcp
    import toolnexus_runtime.skills
    import toolnexus_runtime.toolsets
    from toolnexus_runtime import core

    for name in ("ToolContext", "ToolOutput", "ToolSpec", "Toolkit", "check_runtime"):
        assert hasattr(toolnexus_runtime, name), name
    assert callable(core.load_schema)
    assert callable(toolnexus_runtime.toolsets.provider_tools)
    assert callable(toolnexus_runtime.toolsets.restriction)
    assert callable(toolnexus_runtime.mcp.mcp_server)
    assert callable(toolnexus_runtime.mcp.serve_mcp)
    assert callable(toolnexus_runtime.skills.skills_prompt)


def test_what_the_one_module_core_offered_is_still_there() -> None:
    """Every public name of the runtime's first core.py, importable from it as before, and the
    same object as where it now lives."""
    from toolnexus_runtime import core, datatypes, execution, failures, schemas, watch

    assert issubclass(toolnexus_runtime.Toolkit, core.ToolkitCore)
    homes = {
        datatypes: [
            "EMPTY_CONTEXT", "ErrorMessage", "OnToolCall", "OnToolResult", "Policy",
            "Provider", "RawCall", "SourceError", "ToolCall", "ToolContext", "ToolError",
            "ToolOutput", "ToolResult", "ToolSpec", "get",
        ],
        execution: ["DEFAULT_THREADS"],
        failures: ["default_error_message", "unknown_tool"],
        schemas: ["load_schema"],
        watch: ["BLOCKING_SECONDS"],
    }  # fmt: skip
    for home, names in homes.items():
        for name in names:
            assert getattr(core, name) is getattr(home, name), name
            assert name in core.__all__, name
