"""The built-in tools (the seed's `BuiltinsConfig`): ten ready-made specs, shipped as data files
beside this module (specs/), that join a build when `builtins` in [tool.toolnexus-gen] selects
them. They keep the seed project's (and opencode's) tool and argument names, go through the
pipeline as any spec does, and run in the runtime's `toolnexus_runtime.builtins`.

`builtins = false` (the default: a build does not grow a shell because nobody said no), `true`
(all ten), a list of names, or `{tools = {bash = false}}` (all ten but those set to false).
"""

from __future__ import annotations

import json
from pathlib import Path

from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.config.pyproject import Setting
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.fs.paths import discover, display_path
from toolnexus_gen.ir import Contributed, Contribution, Document, Positions
from toolnexus_gen.memo import canonical

# In the seed's order (its create_builtin_tools).
NAMES = (
    "bash",
    "read",
    "write",
    "edit",
    "grep",
    "glob",
    "webfetch",
    "question",
    "apply_patch",
    "todowrite",
)
SPECS = Path(__file__).parent / "specs"  # one spec file per tool (and skill.json, the skill tool)


def at_setting(setting: Setting, code: str, message: str, severity: Severity) -> Diagnostic:
    return Diagnostic(setting.display, setting.line, setting.col, code, message, severity)


def selected(setting: Setting) -> tuple[list[str], list[Diagnostic]]:
    """The names the setting selects, in the seed's order, and what is wrong with it."""
    value = setting.value
    if isinstance(value, bool):
        return (list(NAMES) if value else []), []
    chosen = value if isinstance(value, list) else value.get("tools", {})
    unknown = [name for name in chosen if name not in NAMES]
    found = [
        at_setting(
            setting,
            "TN420",
            f"builtins: unknown built-in tool {name!r} (known: {', '.join(NAMES)})",
            Severity.ERROR,
        )
        for name in unknown
    ]
    if isinstance(value, list):
        return [name for name in NAMES if name in chosen], found
    return [name for name in NAMES if value.get("tools", {}).get(name) is not False], found


def document(path: Path, setting: Setting, binding: dict[str, object], data: object) -> Document:
    """A spec a source makes, placed at the setting that asked for it: every diagnostic about
    it points there. Its bytes stand for everything it was made from (the build cache's key)."""
    raw = canonical([data, binding, setting.display, setting.line, setting.col]).encode("utf-8")
    positions = Positions(values={"": (setting.line, setting.col)})
    return Document(path, setting.display, data, positions, raw)


def contribute(options: BuildOptions) -> Contribution:
    setting = options.builtins
    if setting is None:
        return Contribution()
    names, diagnostics = selected(setting)
    specs = {path.stem: path for path in discover(options.specs)}
    made = []
    for name in names:
        if name in specs:  # the user's spec of that name wins
            diagnostics.append(
                at_setting(
                    setting,
                    "TN421",
                    f"built-in tool {name!r} is replaced by the spec {display_path(specs[name])}",
                    Severity.WARNING,
                )
            )
            continue
        path = SPECS / f"{name}.json"
        binding: dict[str, object] = {"builtin": name}
        data = json.loads(path.read_text("utf-8"))
        made.append(Contributed(f"builtin:{name}", document(path, setting, binding, data), binding))
    return Contribution(tuple(made), (), tuple(diagnostics))
