"""Overrides: what a project changes of a tool that came from a source (an OpenAPI document, an
MCP server, the built-ins), laid over the source's pristine spec at build time, so a `sync`
never loses them (`[tool.toolnexus-gen.overrides.<tool>]`, read by config/curated.py).

A tool's override renames it or its arguments, rewrites descriptions, hides arguments (a fixed
value, `${VAR}` read at run time, or a default is sent in their place), adds defaults, leaves the
tool out, or keeps it from some targets. Everything after this stage (provider files, models,
`list`, `breaking`) sees the curated tool; the binding records how to map a call back to what
the source expects (`{"curated": {"binding": <the source's>, "rename": {new: old}, "fixed":
{old: value}, "defaults": {old: value}, "constants": {old: value}, "hidden": [old, ...]}}`:
toolnexus_runtime's
registry unwraps it). Only `fixed` (the project's own table) reads `${VAR}` at run time;
`constants` (a hidden argument's default, the source's or the project's) are sent as written.

Every override is checked here with a located diagnostic in pyproject.toml (TN370-TN379); an
override whose tool or argument a sync removed (the snapshot's `.toolnexus-sync.json` says so)
is a warning naming that change (TN376) rather than an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolnexus_gen.config.curated import ENV, Curated, Override
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Tool
from toolnexus_gen.targets.registry import NAMES
from toolnexus_gen.toolspec.naming import python_names

MANIFEST = ".toolnexus-sync.json"  # what a sync wrote into specs/<source>/, and what it removed


def gone_upstream(specs: Path) -> dict[str, str]:
    """What the syncs removed: `tool` or `tool/argument` -> the change, in words."""
    found: dict[str, str] = {}
    if not specs.is_dir():
        return found
    for path in sorted(specs.glob(f"*/{MANIFEST}")):
        found.update(manifest_gone(path.parent))
    return found


def gone_record(
    before: dict[str, str], old: dict[str, str], new: dict[str, str], by: str
) -> dict[str, str]:
    """A source folder's record of what upstream removed, after a sync: `before` updated with
    the tools (`name.json` in `old` and not in `new`) and the top-level arguments (of a tool in
    both) that are gone, less those that came back. `by`: the sync, in words."""
    gone = dict(before)
    for file in old.keys() - new.keys():
        gone[Path(file).stem] = f"removed upstream by {by}"
    for file in old.keys() & new.keys():
        for arg in _arguments(old[file]) - _arguments(new[file]):
            gone[f"{Path(file).stem}/{arg}"] = f"argument {arg!r} removed upstream by {by}"
    for file, text in new.items():  # back again: an override applies as before
        tool = Path(file).stem
        gone.pop(tool, None)
        for arg in _arguments(text):
            gone.pop(f"{tool}/{arg}", None)
    return dict(sorted(gone.items()))


def _arguments(text: str) -> set[str]:
    try:
        spec = json.loads(text)
    except (ValueError, RecursionError):
        return set()
    schema = spec.get("input_schema") if isinstance(spec, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return set(properties) if isinstance(properties, dict) else set()


def manifest_gone(folder: Path) -> dict[str, str]:
    """The record a source folder's manifest holds."""
    try:
        data = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    gone = data.get("gone") if isinstance(data, dict) else None
    return {k: v for k, v in gone.items() if isinstance(v, str)} if isinstance(gone, dict) else {}


def _at(override: Override, key: str, code: str, message: str, warn: bool = False) -> Diagnostic:
    line, col = override.at(key)
    severity = Severity.WARNING if warn else Severity.ERROR
    return Diagnostic(override.display, line, col, code, message, severity)


def apply(
    tool: Tool, curated: Curated, gone: dict[str, str]
) -> tuple[Tool | None, list[Diagnostic]]:
    """The tool as its override makes it (None: left out), and what is wrong with the override.
    `tool` is bundled: its input schema holds every definition it reaches."""
    override = curated.override(tool.name)
    if override is None:
        return tool, []
    what = f"overrides.{tool.name}"
    if tool.binding is None:
        return tool, [
            _at(
                override,
                "",
                "TN370",
                f"{what}: tool {tool.name!r} is one of your own specs ({tool.display}), not a "
                "source's: edit the spec itself",
            )
        ]
    if override.exclude:
        return None, []
    problems: list[Diagnostic] = []
    schema = _copy(tool.input_schema) if tool.input_schema is not None else None
    properties: dict[str, Any] = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if not isinstance(properties, dict):
        properties = {}
    required = list(schema.get("required", [])) if isinstance(schema, dict) else []

    def known(arg: str, key: str) -> bool:
        if arg in properties:
            return True
        change = gone.get(f"{tool.name}/{arg}")
        if change is not None:
            problems.append(
                _at(
                    override,
                    key,
                    "TN376",
                    f"{what}: argument {arg!r} is gone upstream ({change}); this part of the "
                    "override no longer applies: remove it",
                    warn=True,
                )
            )
            return False
        listed = ", ".join(properties) or "none"
        problems.append(
            _at(
                override,
                key,
                "TN371",
                f"{what}: tool {tool.name!r} has no argument {arg!r} (its arguments: {listed})",
            )
        )
        return False

    rename: dict[str, str] = {}  # old -> new
    described: dict[str, str] = {}
    for arg, new, text in override.arguments:
        if not known(arg, f"arguments.{arg}"):
            continue
        if new is not None and new != arg:
            rename[arg] = new
        if text is not None:
            described[arg] = text
    hidden: list[str] = []
    for arg in override.hide:
        if known(arg, "hide"):
            hidden.append(arg)
    fixed: dict[str, Any] = {}
    in_headers = _header_arguments(tool.binding)
    for arg, value in override.fixed:
        if not known(arg, f"fixed.{arg}"):
            continue
        problem = _refused(value, properties[arg], schema)
        if problem:
            problems.append(
                _at(override, f"fixed.{arg}", "TN374", f"{what}: fixed.{arg}: {problem}")
            )
            continue
        if arg in in_headers and not _header_text(value):
            problems.append(
                _at(
                    override,
                    f"fixed.{arg}",
                    "TN374",
                    f"{what}: fixed.{arg}: {value!r} is sent in a header, which carries printable "
                    "ASCII only (no line break or control character)",
                )
            )
            continue
        fixed[arg] = value
        if arg not in hidden:  # the model never sees an argument whose value is fixed
            hidden.append(arg)
    defaults: dict[str, Any] = {}
    for arg, value in override.defaults:
        if not known(arg, f"defaults.{arg}"):
            continue
        if "${" in json.dumps(value):
            problems.append(
                _at(
                    override,
                    f"defaults.{arg}",
                    "TN374",
                    f"{what}: defaults.{arg}: a default is shown to the model; read a value "
                    "from the environment with fixed (and hide) instead",
                )
            )
            continue
        problem = _refused(value, properties[arg], schema)
        if problem:
            problems.append(
                _at(override, f"defaults.{arg}", "TN374", f"{what}: defaults.{arg}: {problem}")
            )
            continue
        defaults[arg] = value
    for arg in hidden:
        if arg in rename or arg in described:
            problems.append(
                _at(
                    override,
                    f"arguments.{arg}",
                    "TN372",
                    f"{what}: argument {arg!r} is hidden: it cannot be renamed or described too",
                )
            )
        spec_default = isinstance(properties[arg], dict) and "default" in properties[arg]
        if arg in required and arg not in fixed and arg not in defaults and not spec_default:
            problems.append(
                _at(
                    override,
                    "hide",
                    "TN373",
                    f"{what}: argument {arg!r} is required and hidden, but has neither a fixed "
                    f'value nor a default: add fixed = {{{arg} = ...}} ("${{VAR}}" reads the '
                    "environment at run time) or a default",
                )
            )
    for old, new in rename.items():
        if new in hidden and new not in rename:  # the model would send a hidden one's name
            problems.append(
                _at(
                    override,
                    f"arguments.{old}",
                    "TN372",
                    f"{what}: arguments.{old}.name {new!r} is the name of a hidden argument of "
                    f"{tool.name!r}",
                )
            )
    names = [rename.get(arg, arg) for arg in properties if arg not in hidden]
    for new in set(rename.values()):
        if names.count(new) > 1:
            old = next(a for a, n in rename.items() if n == new)
            problems.append(
                _at(
                    override,
                    f"arguments.{old}",
                    "TN372",
                    f"{what}: arguments.{old}.name {new!r} is the name of another argument of "
                    f"{tool.name!r}",
                )
            )
    if any(p.is_error for p in problems):
        return tool, problems
    # hidden arguments: a default is sent (the model cannot send one), as it is written: only
    # the project's own fixed values read the environment, never what a source says
    constants: dict[str, Any] = {}
    for arg in hidden:
        if arg in fixed:
            continue
        if arg in defaults:
            constants[arg] = defaults.pop(arg)
        elif isinstance(properties[arg], dict) and "default" in properties[arg]:
            constants[arg] = properties[arg]["default"]
            if "${" in json.dumps(constants[arg]):
                problems.append(
                    _at(
                        override,
                        "hide",
                        "TN377",
                        f"{what}: hidden argument {arg!r} sends the source's default "
                        f"{constants[arg]!r} as it is: a source's value never reads the "
                        f'environment; to read one, add fixed = {{{arg} = "${{VAR}}"}}',
                        warn=True,
                    )
                )
    made: dict[str, Any] = dict(
        name=override.name or tool.name,
        description=override.description or tool.description,
        targets=_targets(tool.targets, override),
    )
    if override.name:
        made["python"] = python_names(override.name)
    if isinstance(schema, dict) and (rename or described or hidden or defaults):
        new_properties = {}
        for arg, node in properties.items():
            if arg in hidden:
                continue
            if arg in described or arg in defaults:
                node = dict(node) if isinstance(node, dict) else {}
                if arg in described:
                    node["description"] = described[arg]
                if arg in defaults:
                    node["default"] = defaults[arg]
            new_properties[rename.get(arg, arg)] = node
        schema["properties"] = new_properties
        kept = [rename.get(a, a) for a in required if a not in hidden and a not in defaults]
        if kept:
            schema["required"] = kept
        else:
            schema.pop("required", None)
        made["input_schema"] = schema
        if tool.located is not None:
            made["located"] = tool.located.derive(schema)
    binding = tool.binding
    if rename or hidden or defaults:
        mapping: dict[str, Any] = {"binding": binding}
        if rename:
            mapping["rename"] = {new: old for old, new in rename.items()}
        if fixed:
            mapping["fixed"] = fixed
        if defaults:
            mapping["defaults"] = defaults
        if constants:
            mapping["constants"] = constants
        if hidden:  # never taken from the model, even where the schema takes other keys
            mapping["hidden"] = [arg for arg in properties if arg in hidden]
        made["binding"] = {"curated": mapping}
    return replace(tool, **made), problems


def _header_arguments(binding: Any) -> set[str]:
    """The arguments an http binding sends in a header."""
    from toolnexus_gen.toolspec.http import placeholders

    http = binding.get("http") if isinstance(binding, dict) else None
    headers = http.get("headers") if isinstance(http, dict) else None
    if not isinstance(headers, dict):
        return set()
    return {
        name
        for template in headers.values()
        if isinstance(template, str)
        for kind, name in placeholders(template)
        if kind == "arg"
    }


def _header_text(value: Any) -> bool:
    """Whether a fixed value can go in a header as it is written (a `${VAR}` in it is checked
    when it is read, at run time)."""
    from toolnexus_gen.toolspec.http import HEADER_TEXT

    text = ENV.sub("", value) if isinstance(value, str) else json.dumps(value)
    return HEADER_TEXT.fullmatch(text) is not None


def _targets(current: frozenset[str] | None, override: Override) -> frozenset[str] | None:
    if override.only is None and not override.exclude_targets:
        return current
    chosen = set(current if current is not None else NAMES)
    if override.only is not None:
        chosen &= set(override.only)
    return frozenset(chosen - set(override.exclude_targets))


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _refused(value: Any, node: Any, root: Any) -> str:
    """Why the argument's schema refuses `value` ("" when it takes it). A `${VAR}` is text
    read at run time: the schema must take a string."""
    import jsonschema

    if not isinstance(node, dict):
        return ""
    probe = value
    if isinstance(value, str) and ENV.search(value):
        probe = ENV.sub("x", value)
        kinds = node.get("type")
        if kinds is not None and "string" not in ([kinds] if isinstance(kinds, str) else kinds):
            return f"{value!r} is text read from the environment, but the argument takes {kinds}"
        if "enum" in node or "const" in node or "pattern" in node or "format" in node:
            return ""  # the value is known at run time only
    schema = dict(node)
    if isinstance(root, dict) and "$defs" in root:
        schema["$defs"] = root["$defs"]
    try:
        validator = jsonschema.Draft202012Validator(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(probe))
    except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.RefResolutionError):
        return ""
    if error is None:
        return ""
    return f"the argument's schema refuses {value!r}: {error.message}"


def original_names(rels: Iterable[str]) -> set[str]:
    """The names the sources give the build's tools, from their units' names."""
    names = set()
    for rel in rels:
        if ":" in rel:  # a contributed spec: builtin:read
            names.add(rel.split(":", 1)[1])
        else:
            names.add(Path(rel).stem)
    return names


def whole_set(
    curated: Curated,
    rels: Sequence[str],
    names: Sequence[tuple[str, str]],
    gone: dict[str, str],
    specs: Path,
) -> list[Diagnostic]:
    """What only the whole set can tell: an override of no tool, a rename onto another tool's
    name. `names`: (name, the spec it is in) of each tool."""
    problems = []
    known = original_names(rels)
    for override in curated.overrides:
        what = f"overrides.{override.tool}"
        if override.tool not in known:
            change = gone.get(override.tool)
            if change is not None:
                problems.append(
                    _at(
                        override,
                        "",
                        "TN376",
                        f"{what}: tool {override.tool!r} is gone upstream ({change}); the "
                        "override no longer applies: remove it",
                        warn=True,
                    )
                )
                continue
            close = _close(override.tool, known)
            unsynced = [
                d.name for d in curated.openapi if not (specs / d.name / MANIFEST).is_file()
            ]
            hint = (
                f"; openapi.{unsynced[0]} was never synced: run `toolnexus-gen sync`"
                if unsynced
                else " (`toolnexus-gen list` shows them)"
            )
            problems.append(
                _at(
                    override,
                    "",
                    "TN375",
                    f"{what}: no tool is named {override.tool!r}{close}; overrides key on the "
                    f"name the source gives a tool{hint}",
                )
            )
        elif override.name and sum(name == override.name for name, _ in names) > 1:
            alike = [where for name, where in names if name == override.name]
            other = next((w for w in alike if Path(w).stem != override.tool), alike[0])
            problems.append(
                _at(
                    override,
                    "name",
                    "TN372",
                    f"{what}: name {override.name!r} is already a tool's ({other}); choose "
                    "another name",
                )
            )
    return problems


def _close(name: str, known: Iterable[str]) -> str:
    import difflib

    found = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {found[0]!r}?)" if found else ""
