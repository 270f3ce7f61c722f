"""The whole set, shaped: toolsets resolved, each request's limits and token budget checked, and
what each provider file carries besides the tools (its tool search tool, hosted tools).

Everything here reads ToolInfo and the configuration only (config/many.py), so it runs the same
on units made now and units reused from the last build.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolnexus_gen.config.many import NO_HOSTED, Hosted, Many, Toolset
from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.diagnostics.catalogue import RULES
from toolnexus_gen.ir import ToolInfo, ToolSet
from toolnexus_gen.pipeline.tokens import OVERHEAD, estimate
from toolnexus_gen.targets import TARGETS

SEARCH_TOOLS = "search_tools"  # the loops' client-side search, where a provider has none
ALL = "(all tools)"


def resolve(
    tools: Sequence[ToolInfo], many: Many
) -> tuple[dict[str, tuple[str, ...]], list[Diagnostic]]:
    """Each toolset's tools (name order), and a located error for each group or tool it names
    that no spec has."""
    names = {tool.name for tool in tools}
    order = {tool.name: n for n, tool in enumerate(tools)}
    in_group: dict[str, list[str]] = {}  # each toolset looks its groups up, never every tool
    for tool in tools:
        for group in dict.fromkeys(tool.groups):
            in_group.setdefault(group, []).append(tool.name)
    groups = set(in_group)
    found: list[Diagnostic] = []
    members: dict[str, tuple[str, ...]] = {}
    for toolset in many.toolsets:
        for group in toolset.groups:
            if group not in groups:
                found.append(
                    _at(
                        toolset,
                        "TN460",
                        f"toolset {toolset.name!r}: no spec is in group {group!r}{_near(group, groups)} (a spec joins a group with groups: [...])",
                        toolset.at("groups", group),
                    )
                )
        for name in toolset.tools:
            if name not in names:
                found.append(
                    _at(
                        toolset,
                        "TN460",
                        f"toolset {toolset.name!r}: no tool named {name!r}{_near(name, names)}",
                        toolset.at("tools", name),
                    )
                )
        chosen = {name for name in toolset.tools if name in names}
        chosen.update(name for group in toolset.groups for name in in_group.get(group, ()))
        members[toolset.name] = tuple(sorted(chosen, key=order.__getitem__))
        if not members[toolset.name] and not found:
            found.append(_at(toolset, "TN468", f"toolset {toolset.name!r} selects no tool"))
    return members, found


def _near(word: str, known: set[str]) -> str:
    close = difflib.get_close_matches(word, sorted(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _at(
    toolset: Toolset,
    code: str,
    message: str,
    place: tuple[int, int] | None = None,
    severity: Severity = Severity.ERROR,
) -> Diagnostic:
    line, col = place or toolset.place
    return Diagnostic(toolset.display, line, col, code, message, severity)


# -- what a provider file carries besides the tools ------------------------------------------


def extras(target: str, tools: Sequence[ToolInfo], many: Many) -> list[dict[str, Any]]:
    """The entries `target`'s file (or a toolset's request) holds after its tools: the
    provider's tool search tool when one of them is deferred, then the hosted tools (Gemini's
    go beside the functionDeclarations wrapper)."""
    found: list[dict[str, Any]] = []
    spec = TARGETS[target]
    if spec.search_tool is not None and any(t.defer_loading for t in tools):
        found.append(spec.search_tool(many.tool_search))
    if spec.hosted:
        found += [hosted.entries[target] for hosted in many.hosted if hosted.sent_to(target)]
    return found


def namespaces(target: str, tools: Sequence[ToolInfo]) -> list[dict[str, Any]]:
    """The namespace tools `target`'s file (or a toolset's request) holds, without their tools,
    where the target groups deferred tools (OpenAI Responses)."""
    entry = TARGETS[target].namespace_entry
    if entry is None:
        return []
    grouped: dict[str, list[ToolInfo]] = {}
    for tool in tools:
        if tool.namespace is not None:
            grouped.setdefault(tool.namespace, []).append(tool)
    return [entry(name, members) for name, members in grouped.items()]


def client_search(target: str, tools: Sequence[ToolInfo]) -> bool:
    """Whether the loops offer their client-side search_tools for these tools on `target`."""
    return (
        TARGETS[target].search_tool is None
        and target != "mcp"
        and any(t.defer_loading for t in tools)
    )


# -- checks over the whole set and each toolset ----------------------------------------------


def check(toolset: ToolSet, options: BuildOptions) -> list[Diagnostic]:
    """Per-request limits, deferred loading, reserved names and budgets, for the whole set and
    for each toolset."""
    many = options.many
    by_name = {tool.name: tool for tool in toolset.tools}
    sets = {name: [by_name[n] for n in names] for name, names in toolset.toolsets}
    found: list[Diagnostic] = []
    for target in options.targets:
        carried = [tool for tool in toolset.tools if tool.for_target(target)]
        found += _limit(target, carried, many, None, bool(sets))
        if toolset.tools and not carried:
            found.append(_none_for(target, toolset.tools[0], None))
        for toolset_config in many.toolsets:
            members = sets.get(toolset_config.name, [])
            subset = [t for t in members if t.for_target(target)]
            if subset:
                found += _limit(target, subset, many, toolset_config, True)
                found += _subset_rules(target, subset, toolset_config, options)
            elif members:
                found.append(_none_for(target, members[0], toolset_config))
        found += _reserved(target, carried, many)
    found += _deferred(toolset.tools, sets, many)
    found += _hosted_targets(options)
    found += _gemini_rule(toolset, options)
    found += _budgets(toolset, options)
    return found


def _limit(
    target: str, tools: list[ToolInfo], many: Many, toolset: Toolset | None, has_toolsets: bool
) -> list[Diagnostic]:
    rule = TARGETS[target].max_tools
    if rule is None:
        return []
    limit, code = rule
    count = len(tools) + (0 if target == "gemini" else len(extras(target, tools, many)))
    count += client_search(target, tools)
    if count <= limit:
        return []
    what = "function declarations" if target == "gemini" else "tools"
    text = f"{count} {what}; a request takes at most {limit}"
    if toolset is not None:
        return [
            _at(
                toolset,
                "TN461",
                f"toolset {toolset.name!r}: {target}: {text} ({RULES[code].provider_error}); split it or send fewer tools",
            )
        ]
    culprit = tools[limit] if len(tools) > limit else tools[-1]
    line, col = culprit.place("name")
    severity = RULES[code].severity
    message = f"{target}: {text} in the whole set"
    if has_toolsets:  # requests send toolsets, each checked on its own
        severity = Severity.WARNING
        message += "; requests that send a toolset are checked on their own (TN461)"
    else:
        message += ": define toolsets ([tool.toolnexus-gen.toolsets]) and send one per request"
    return [Diagnostic(culprit.display, line, col, code, message, severity, target=target)]


def _none_for(target: str, first: ToolInfo, toolset: Toolset | None) -> Diagnostic:
    """A request (a toolset, or the whole set) that holds no tool for `target`: every tool in
    it excludes the target."""
    what = f"toolset {toolset.name!r}" if toolset else "the whole set"
    message = (
        f"{what} holds no tool for {target} (each of its tools excludes it): a request with it "
        "carries no tools; send it without them (the loops do)"
    )
    empty = TARGETS[target].empty_tools
    if empty is not None:
        message += f"; {empty}"
    if toolset is not None:
        return _at(toolset, "TN468", f"{target}: {message}", severity=Severity.WARNING)
    line, col = first.place("name")
    return Diagnostic(
        first.display, line, col, "TN468", f"{target}: {message}", Severity.WARNING, target=target
    )


def _subset_rules(
    target: str, tools: list[ToolInfo], toolset: Toolset, options: BuildOptions
) -> list[Diagnostic]:
    """The target's own per-request rules (Anthropic's strict limits...) on one toolset: there
    they bind one request, so they are errors."""
    found = TARGETS[target].check_all(tools, options.target_options.get(target, {}))
    return [_at(toolset, "TN461", f"toolset {toolset.name!r}: {d.message}") for d in found]


def _reserved(target: str, tools: list[ToolInfo], many: Many) -> list[Diagnostic]:
    """A spec named like a provider tool its file carries beside it (two tools, one name)."""
    taken = {
        entry["name"]: "its tool search tool" if "tool_search" in entry["type"] else "a hosted tool"
        for entry in extras(target, tools, many)
        if isinstance(entry.get("name"), str) and isinstance(entry.get("type"), str)
    }
    if client_search(target, tools):
        taken[SEARCH_TOOLS] = "the loops' client-side search for deferred tools"
    for namespace in namespaces(target, tools):
        taken[namespace["name"]] = "the namespace of its deferred tools"
    if not taken:
        return []
    found = []
    for tool in tools:
        what = taken.get(tool.sent_name(target))
        if what is not None:
            line, col = tool.place("name")
            found.append(
                Diagnostic(
                    tool.display,
                    line,
                    col,
                    "TN466",
                    f"{target}: {tool.name!r} is the name of {what} in the same request; rename the tool",
                    target=target,
                )
            )
    return found


def _deferred(
    tools: Sequence[ToolInfo], sets: dict[str, list[ToolInfo]], many: Many
) -> list[Diagnostic]:
    found = []
    if tools and all(tool.defer_loading for tool in tools):
        line, col = tools[0].place("defer_loading")
        found.append(
            Diagnostic(
                tools[0].display,
                line,
                col,
                "TN463",
                "every tool has defer_loading: true; at least one must stay loaded (the provider rejects a request whose every tool is deferred)",
            )
        )
    for toolset in many.toolsets:
        members = sets.get(toolset.name, [])
        if members and all(tool.defer_loading for tool in members):
            found.append(
                _at(
                    toolset,
                    "TN463",
                    f"toolset {toolset.name!r}: every tool in it is deferred; at least one must stay loaded",
                )
            )
    return found


def _hosted_targets(options: BuildOptions) -> list[Diagnostic]:
    """A hosted tool that a target of the build cannot carry is an error, never silently left
    out: a well-known one (`name = true`, meant for every target) on each such target, and any
    that goes to none of the targets built. A target the declaration keeps it from
    (`targets = {exclude = [...]}` or `{only = [...]}`) is the user's choice. MCP takes no
    hosted tool (its clients' models have their own)."""
    found = []
    built = [t for t in options.targets if t != "mcp"]
    for hosted in options.many.hosted:
        chosen = [t for t in built if hosted.allows(t)]
        if hosted.known:
            missing = [t for t in chosen if t not in hosted.entries]
        elif not any(hosted.sent_to(t) for t in built):
            missing = chosen  # declared for other targets only: it would reach no request
        else:
            missing = []  # its table names the targets it goes to
        if not missing:
            continue
        why = " nor to ".join(f"{t} ({NO_HOSTED.get(t, _no_entry(hosted, t))})" for t in missing)
        keep = "[" + ", ".join(f'"{t}"' for t in missing) + "]"
        fix = (
            f"{hosted.name} = {{targets = {{exclude = {keep}}}}}"
            if hosted.known
            else f"targets = {{exclude = {keep}}} in its table"
        )
        found.append(
            Diagnostic(
                hosted.display,
                hosted.place[0],
                hosted.place[1],
                "TN465",
                f"hosted tool {hosted.name!r} cannot go to {why}. Build "
                "for targets that carry it (targets in [tool.toolnexus-gen], or --target), or "
                f"keep it from {'that target' if len(missing) == 1 else 'those targets'}: {fix}",
            )
        )
    return found


def _no_entry(hosted: Hosted, target: str) -> str:
    if hosted.known:
        return f"the provider has no {hosted.name} tool"
    have = ", ".join(hosted.entries)
    return (
        f"it has entries for {have} only; add one in the provider's own shape ({target} = {{...}})"
    )


def _gemini_rule(toolset: ToolSet, options: BuildOptions) -> list[Diagnostic]:
    if "gemini" not in options.targets or not any(t.for_target("gemini") for t in toolset.tools):
        return []
    return [
        Diagnostic(
            hosted.display,
            hosted.place[0],
            hosted.place[1],
            "TN467",
            f"gemini: hosted tool {hosted.name!r} beside function declarations needs Gemini 3 and "
            "toolConfig.includeServerSideToolInvocations = true (the loops set it); Gemini 2.x "
            "rejects the request (Tool use with function calling is unsupported)",
            Severity.WARNING,
            target="gemini",
        )
        for hosted in options.many.hosted
        if hosted.sent_to("gemini")
    ]


# -- token budgets ----------------------------------------------------------------------------


@dataclass
class Budget:
    """Estimated tokens of tool definitions per target: for every tool, for the whole set and
    for each toolset (what a request that sends it pays up front: its loaded tools, its search
    and hosted tools, the provider's fixed overhead; deferred tools cost when they are loaded)."""

    targets: tuple[str, ...]
    sets: list[tuple[str, dict[str, int], int]]  # (label, target -> tokens, deferred tools)
    tools: list[tuple[str, dict[str, int]]]  # (tool, target -> tokens of its entry)

    def largest(self, toolsets: bool) -> tuple[str, str, int] | None:
        """(set, target, tokens) of the costliest request: among the toolsets when there are
        some, else the whole set."""
        rows = [row for row in self.sets if (row[0] != ALL) == toolsets] or self.sets
        best = None
        for label, costs, _ in rows:
            for target, tokens in costs.items():
                if best is None or tokens > best[2]:
                    best = (label, target, tokens)
        return best


def set_cost(target: str, tools: Sequence[ToolInfo], many: Many) -> int:
    carried = [tool for tool in tools if tool.for_target(target)]
    if not carried:
        return 0
    total = sum(tool.tokens_for(target) for tool in carried if not tool.defer_loading)
    if target == "mcp":  # a server's list: deferral and hosted tools are the client's business
        return sum(tool.tokens_for(target) for tool in carried)
    total += sum(estimate(entry) for entry in extras(target, carried, many))
    total += sum(estimate(entry) for entry in namespaces(target, carried))  # seen up front
    if client_search(target, carried):
        total += SEARCH_TOOLS_TOKENS
    return total + OVERHEAD.get(target, 0)


SEARCH_TOOLS_TOKENS = 90  # the loops' search_tools definition (toolnexus_runtime.search)


def budget(toolset: ToolSet, options: BuildOptions, *, per_tool: bool = True) -> Budget:
    """The estimates; `per_tool=False`: the sets' only (what a build's summary reads)."""
    by_name = {tool.name: tool for tool in toolset.tools}
    rows = [(ALL, list(toolset.tools))]
    rows += [(name, [by_name[n] for n in names]) for name, names in toolset.toolsets]
    sets = [
        (
            label,
            {target: set_cost(target, tools, options.many) for target in options.targets},
            sum(tool.defer_loading for tool in tools),
        )
        for label, tools in rows
    ]
    tools = [
        (
            tool.name,
            {
                target: tool.tokens_for(target)
                for target in options.targets
                if tool.for_target(target)
            },
        )
        for tool in (toolset.tools if per_tool else ())
    ]
    return Budget(options.targets, sets, tools)


def _budgets(toolset: ToolSet, options: BuildOptions) -> list[Diagnostic]:
    many = options.many
    if many.max_tool_tokens is None and not any(t.max_tool_tokens for t in many.toolsets):
        return []
    by_name = {tool.name: tool for tool in toolset.tools}
    found = []
    checked: list[tuple[Toolset | None, list[ToolInfo], int]] = []
    if not many.toolsets and many.max_tool_tokens is not None:
        checked.append((None, list(toolset.tools), many.max_tool_tokens))
    for each in many.toolsets:
        limit = each.max_tool_tokens or many.max_tool_tokens
        if limit is not None:
            names = dict(toolset.toolsets).get(each.name, ())
            checked.append((each, [by_name[n] for n in names], limit))
    for config, tools, limit in checked:
        over = {t: c for t in options.targets if (c := set_cost(t, tools, many)) > limit}
        if not over:
            continue
        costs = ", ".join(f"{target} ~{cost:,}" for target, cost in over.items())
        what = f"toolset {config.name!r}" if config else "the whole set"
        message = f"{what} costs more than max_tool_tokens = {limit:,} ({costs} tokens, estimated); split it, defer some tools or shorten descriptions"
        if config is not None:
            at = config.at("max_tool_tokens", "")  # its own limit, else the toolset
            found.append(_at(config, "TN462", message, at, Severity.WARNING))
        else:
            line, col = many.budget_place
            found.append(Diagnostic(many.display, line, col, "TN462", message, Severity.WARNING))
    return found


def with_toolsets(toolset: ToolSet, members: dict[str, tuple[str, ...]]) -> ToolSet:
    return replace(toolset, toolsets=tuple(members.items()))


def summary(budget: Budget, toolsets: bool) -> str:
    """The build summary's token line: the costliest request, estimated."""
    largest = budget.largest(toolsets)
    if largest is None or not largest[2]:
        return ""
    label, target, tokens = largest
    if toolsets:
        return f"largest toolset: {label}, ~{tokens:,} tokens of tool definitions ({target}, estimated)"
    return f"tool definitions: ~{tokens:,} tokens per request ({target}, estimated; no toolsets)"
