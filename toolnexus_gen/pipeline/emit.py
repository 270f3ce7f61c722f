"""Stage 2c: one tool for one target: the schema that target's file carries, the target's rules
on it, and its entry; with the steps the configuration asks for, each reported as a warning.

The steps, in order: inline and node transforms (`effective`), name aliases, strictify, describe,
the target's checks. Some targets have a second form that carries more, tried when the first one
still breaks a rule:
- strictify's tool goes out non-strict when strict mode cannot carry it without forbidding calls
  the spec allows (strict.blocker), or when strict-mode rules still fail after describe (TN223);
- under profile = "reach" (the project's, or the spec's own), a target's other form of entry (Gemini: `parametersJsonSchema` for a
  declaration `parameters` cannot carry after describe; TN222).
The first form whose schema passes the target's rules is used; when none does, the configured
form and its errors are reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import Located, Tool
from toolnexus_gen.targets.aliases import ArgumentMap, alias_properties, make_alias
from toolnexus_gen.targets.base import Target, effective
from toolnexus_gen.targets.describe import describe
from toolnexus_gen.targets.registry import reach_options
from toolnexus_gen.targets.rules import cycle_finding, too_large_finding
from toolnexus_gen.targets.strict import blocker, normalize, strictify
from toolnexus_gen.toolspec.bundle import Cycle, TooLarge


@dataclass
class Emitted:
    """What one target makes of one tool."""

    entry: Any = None  # the tool's entry in the target's file (None: the schema cannot be made)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    alias: str | None = None  # the tool's name in this target's file, where it differs
    argument_map: str | None = None  # JSON [map, refs] of aliased property names (argmaps.py)
    null_map: str | None = None  # JSON [map, refs] of properties strictify made nullable
    # what its strict entry counts against the target's per-request strict limits (optional,
    # union parameters), where the target has such limits; None: not strict
    strict_cost: tuple[int, int] | None = None

    @property
    def schema_errors(self) -> list[Diagnostic]:
        """Errors of the target's schema rules (not of names, which aliases answer)."""
        return [
            d
            for d in self.diagnostics
            if d.is_error and (d.code.startswith("TN3") or d.code == "TN230")
        ]


def emit(
    tool: Tool, target: Target, options: dict[str, Any], *, name_aliases: bool, reach: bool
) -> Emitted:
    """The target's entry for the tool, in the first form whose schema passes its rules. A spec
    with its own `profile: reach` (what the sources write) is made as under the project's."""
    if tool.profile == "reach":
        options, name_aliases, reach = reach_options(target.name, options), True, True
    transforms = options.get("transforms", ())
    strict = "strictify" in transforms
    forms: list[tuple[dict[str, Any], bool | None]] = [(options, True if strict else None)]
    if strict:
        forms.append((options, False))
    other = target.fallback(options) if reach and target.fallback is not None else None
    if other is not None:
        forms.append((other, None))
    first: Emitted | None = None
    reason: Diagnostic | None = None
    for form_options, form_strict in forms:
        made = _emit(tool, target, form_options, form_strict, name_aliases, reach)
        if isinstance(made, Diagnostic):  # strict mode cannot carry it: the next form
            reason = made
            continue
        first = first or made
        if not made.schema_errors:
            if made is not first or reason is not None:
                made.diagnostics.insert(0, _why(target, form_options, form_strict, first, reason))
            return made
        if first is made:
            reason = made.schema_errors[0]
    assert first is not None  # the configured form is always made (a blocker has a successor)
    return first


def _why(
    target: Target,
    options: dict[str, Any],
    strict: bool | None,
    first: Emitted,
    reason: Diagnostic | None,
) -> Diagnostic:
    """The warning saying which form the tool goes out in and why, at the place of the reason."""
    cause = reason or first.schema_errors[0]
    text = cause.message.removeprefix(f"{cause.target}: ") if cause.target else cause.message
    if strict is False and cause.code == "TN223":  # strict.blocker's reason
        code = "TN223"
        message = (
            f"{target.name}: sent non-strict (strictify): strict mode cannot carry this tool "
            f"without forbidding calls its spec allows: {text}"
        )
    elif strict is False:
        code = "TN223"
        message = (
            f"{target.name}: sent non-strict (strictify): strict mode still refuses it after the "
            f"transforms: {cause.code} {text}"
        )
    else:
        code = "TN222"
        field_name = options.get("schema_field", "")
        message = (
            f'{target.name}: sent with {field_name} (profile = "reach"): the configured form '
            f"cannot carry this tool even after describe: {cause.code} {text}"
        )
    return Diagnostic(
        cause.path,
        cause.line,
        cause.col,
        code,
        message,
        Severity.WARNING,
        pointer=cause.pointer,
        target=target.name,
    )


def _emit(
    tool: Tool,
    target: Target,
    options: dict[str, Any],
    strict: bool | None,
    name_aliases: bool,
    reach: bool,
) -> Emitted | Diagnostic:
    """The tool in one form (strict: True strictify, False sent non-strict, None as the spec
    says); a Diagnostic naming why when strict mode cannot carry it."""
    out = Emitted()
    name = target.name
    try:
        located = effective(tool, options, must_inline=target.must_inline(options))
    except Cycle as cycle:
        assert tool.located is not None
        out.diagnostics.append(cycle_finding(tool.located, cycle, name))
        return out
    except TooLarge as big:
        assert tool.located is not None
        out.diagnostics.append(too_large_finding(tool.located, big, name))
        return out
    emitted = tool
    if name_aliases:
        emitted, located, mapping, found = _aliased(tool, located, target)
        out.diagnostics += found
        if emitted.name != tool.name:
            out.alias = emitted.name
        if mapping[0]:
            out.argument_map = json.dumps(mapping, sort_keys=True)
    if strict:
        if located is not None:
            located = normalize(located)
            stop = blocker(located)
            if stop is not None:
                pointer, why = stop
                document, source = located.source(pointer)
                line, col = document.positions.value(source)
                return Diagnostic(document.display, line, col, "TN223", why, pointer=source)
            located, nulls, refs = strictify(located)
            if nulls:
                out.null_map = json.dumps([nulls, refs], sort_keys=True)
        emitted = replace(emitted, strict=True)
        line, col = tool.place("strict")
        out.diagnostics.append(
            Diagnostic(
                tool.display,
                line,
                col,
                "TN221",
                f"{name}: sent in strict mode (strictify): every object closed, every optional "
                "property required and nullable; a null there reaches the handler as absent",
                Severity.WARNING,
                target=name,
            )
        )
    elif strict is False:
        emitted = replace(emitted, strict=False)
    if "describe" in options.get("transforms", ()):
        if located is not None:
            located, described = describe(emitted, located, target, options, keep_arguments=reach)
            out.diagnostics += described
        if emitted.output_located is not None:
            try:
                output = effective(
                    emitted, options, must_inline=target.must_inline(options), output=True
                )
            except (
                Cycle,
                TooLarge,
            ):  # a recursive or too large output schema this form cannot inline: its check says so
                output = None
            if output is not None:
                output, described = describe(
                    emitted, output, target, options, output=True, keep_arguments=reach
                )
                out.diagnostics += described
                emitted = replace(emitted, output_located=output, output_schema=output.schema)
    out.diagnostics += target.check(emitted, located, options)
    if emitted.strict and target.strict_cost is not None:  # counted as it is sent
        out.strict_cost = target.strict_cost(located) if located is not None else (0, 0)
    schema = located.schema if located is not None else None
    out.entry = target.entry(emitted, schema, options)
    return out


def _aliased(
    tool: Tool, located: Located | None, target: Target
) -> tuple[Tool, Located | None, ArgumentMap, list[Diagnostic]]:
    """The tool as `target`'s file names it under name_aliases: a tool name and property names
    the target rejects replaced by aliases it accepts, each reported as a warning."""
    found: list[Diagnostic] = []
    emitted = tool
    rule = target.name_rule
    if rule is not None and not re.fullmatch(rule.pattern, tool.name):
        alias = make_alias(tool.name, rule.pattern, rule.max_length)
        emitted = replace(tool, name=alias)
        line, col = tool.place("name")
        found.append(
            Diagnostic(
                tool.display,
                line,
                col,
                "TN210",
                f"{target.name}: tool name {tool.name!r} is sent as {alias!r} (name_aliases; "
                f"{rule.text}); calls under the alias reach this tool",
                Severity.WARNING,
                target=target.name,
            )
        )
    mapping: ArgumentMap = ({}, {})
    prop = target.property_rule
    if prop is not None and located is not None:
        located, mapping, renamed = alias_properties(
            located, re.compile(prop.pattern), prop.max_length, ".-"
        )
        for pointer, name, alias in renamed:
            document, source = located.source(pointer)
            line, col = document.positions.key(source)
            found.append(
                Diagnostic(
                    document.display,
                    line,
                    col,
                    "TN211",
                    f"{target.name}: property {name!r} is sent as {alias!r} (name_aliases; "
                    f"{prop.text}); handlers still see {name!r}",
                    Severity.WARNING,
                    pointer=source,
                    target=target.name,
                )
            )
    return emitted, located, mapping, found
