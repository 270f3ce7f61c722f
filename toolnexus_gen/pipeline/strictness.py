"""Per-request strict limits under strictify: which tools stay strict (Anthropic).

Anthropic refuses a request whose strict tools are more than 20, or hold more than 24 optional or
16 union parameters between them ("Schema is too complex for compilation."). A tool's strictness
is a property of its entry in the provider file, while a request sends the whole file or one
toolset of it; so under strictify the build chooses, once per file, which of the tools it made
strict stay strict, such that every request stays within the limits:
- the requests are the whole set when there are no toolsets, else each toolset (a request that
  sends the whole file then is the TN355 warning, as the other limits are for the whole set);
- the tools are taken by the share of the limits they use (optional/24 + union/16), then by
  name: each stays strict when every request holding it still fits with it, else it goes out
  non-strict (TN226, a warning naming the request it did not fit). A tool strict in the file
  counts in every toolset that holds it, so the rule holds for each toolset at once.
Deferred tools count as well: whether Anthropic compiles them before they are loaded is not
documented. A spec's own `strict: true` without strictify is the author's choice: it is not
changed, and the limits are reported (TN355, TN461).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.ir import ToolInfo, ToolSet
from toolnexus_gen.targets import TARGETS

WHOLE_SET = "the whole set (every request sends it)"


def relax(toolset: ToolSet, options: BuildOptions) -> tuple[ToolSet, list[Diagnostic]]:
    """The set with every tool that must go out non-strict marked so (ToolSet.relaxed, and its
    ToolInfo no longer counted strict there), and a warning for each."""
    relaxed: dict[str, tuple[str, ...]] = {}
    found: list[Diagnostic] = []
    for target in options.targets:
        spec = TARGETS[target]
        transforms = options.target_options.get(target, {}).get("transforms", ())
        if spec.strict_limits is None:
            continue
        if "strictify" in transforms:
            dropped = _choose(target, toolset, spec.strict_limits, lambda tool: True)
        elif any(tool.profile == "reach" for tool in toolset.tools):
            # only the specs with their own profile "reach" were strictified; the others' strict
            # entries are their authors' choice and count first
            dropped = _choose(
                target, toolset, spec.strict_limits, lambda tool: tool.profile == "reach"
            )
        else:
            continue
        if dropped:
            relaxed[target] = tuple(sorted(dropped))
            found += [
                _warning(target, tool, why, spec.strict_limits) for tool, why in dropped.values()
            ]
    if not relaxed:
        return toolset, found
    gone = {(target, name) for target, names in relaxed.items() for name in names}
    tools = tuple(
        replace(
            tool,
            strict_costs=tuple(c for c in tool.strict_costs if (c[0], tool.name) not in gone),
        )
        for tool in toolset.tools
    )
    return replace(toolset, tools=tools, relaxed=tuple(relaxed.items())), found


def _choose(
    target: str,
    toolset: ToolSet,
    limits: tuple[int, int, int],
    strictified: Callable[[ToolInfo], bool],
) -> dict[str, tuple[ToolInfo, str]]:
    """The tools that go out non-strict, each with the request it did not fit: only those
    `strictified` made strict may be dropped; the others (an author's `strict: true`) count
    first."""
    carried = [tool for tool in toolset.tools if tool.for_target(target)]
    if toolset.toolsets:
        requests = {f"toolset {name!r}": frozenset(members) for name, members in toolset.toolsets}
    else:
        requests = {WHOLE_SET: frozenset(tool.name for tool in carried)}
    max_tools, max_optional, max_unions = limits
    used = {label: [0, 0, 0] for label in requests}
    strict = [(tool, cost) for tool in carried if (cost := tool.strict_cost(target)) is not None]
    # the share of the limits each uses, then the name: deterministic, and as many stay as fit
    strict.sort(
        key=lambda pair: (
            strictified(pair[0]),
            pair[1][0] / max_optional + pair[1][1] / max_unions,
            pair[0].name,
        )
    )
    dropped: dict[str, tuple[ToolInfo, str]] = {}
    for tool, cost in strict:
        holding = [label for label, members in requests.items() if tool.name in members]
        for label in holding if strictified(tool) else ():
            tools, optional, unions = used[label]
            if (
                tools + 1 > max_tools
                or optional + cost[0] > max_optional
                or unions + cost[1] > max_unions
            ):
                dropped[tool.name] = (
                    tool,
                    f"{label} already has {tools} strict tools with {optional} optional and "
                    f"{unions} union parameters",
                )
                break
        else:
            for label in holding:
                used[label][0] += 1
                used[label][1] += cost[0]
                used[label][2] += cost[1]
    return dropped


def _warning(target: str, tool: ToolInfo, why: str, limits: tuple[int, int, int]) -> Diagnostic:
    optional, unions = tool.strict_cost(target) or (0, 0)
    line, col = tool.place("strict")
    return Diagnostic(
        tool.display,
        line,
        col,
        "TN226",
        f"{target}: sent non-strict (strictify): {why}, and this tool ({optional} optional, "
        f"{unions} union) would take it past the per-request strict limits ({limits[0]} tools, "
        f"{limits[1]} optional, {limits[2]} union parameters); the tools that use the least of "
        "the limits stay strict",
        Severity.WARNING,
        target=target,
    )
