"""Toolsets at run time: a provider's tool list cut down to one toolset (`to_<target>(toolset=)`,
the loops, the integrations), and each provider's own way of restricting a request to a toolset
while the full list is sent, so prompt caches stay warm (`allowed_tools`).

A generated package's `TOOLSETS` maps each toolset to its tools' spec names; provider files may
spell a name differently (name_aliases), so subsets are taken by the names the file gives.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .schemas import _schema_text, load_schema

# Where a provider has no allowed-subset form, what to do instead.
NO_RESTRICTION = {
    "anthropic": "Anthropic's tool_choice has no allowed-subset form (auto, any, tool, none): send "
    "to_anthropic(toolset=...) (a different tools array invalidates the prompt cache from the "
    "tools on), or mark rarely used tools defer_loading: true",
    "bedrock": "Bedrock Converse's toolChoice has no allowed-subset form (auto, any, tool): send "
    "to_bedrock(toolset=...)",
    "mcp": "MCP has no per-request restriction: serve or list to_mcp(toolset=...)",
}
MODES = ("auto", "required")


def members(toolsets: Mapping[str, Sequence[str]], toolset: str) -> tuple[str, ...]:
    """The spec names of a toolset's tools; a clear error for an unknown toolset."""
    if toolset not in toolsets:
        known = ", ".join(toolsets) or "(none: define them under [tool.toolnexus-gen.toolsets])"
        raise ValueError(f"Unknown toolset {toolset!r}. Toolsets: {known}.")
    return tuple(toolsets[toolset])


def function_name(target: str, entry: Any) -> str | None:
    """The name of a function tool entry of `target`'s file; None for anything else (a hosted
    tool, a tool search tool, a namespace)."""
    if not isinstance(entry, Mapping):
        return None
    if target == "openai":
        function = entry.get("function")
        return function.get("name") if entry.get("type") == "function" and function else None
    if target == "openai_responses":
        return entry.get("name") if entry.get("type") == "function" else None
    if target == "anthropic":
        return entry.get("name") if "input_schema" in entry else None
    if target == "bedrock":
        spec = entry.get("toolSpec")
        return spec.get("name") if spec else None
    return entry.get("name")  # mcp, gemini declarations


def _is_search(entry: Any) -> bool:
    kind = entry.get("type") if isinstance(entry, Mapping) else None
    return isinstance(kind, str) and kind.startswith("tool_search")


def subset(target: str, tools: Any, names: Collection[str] | None) -> Any:
    """A provider file's content with only the function tools named (as the file spells them);
    hosted tools are kept, and the tool search tool while a deferred tool remains."""
    if names is None:
        return tools
    if target == "gemini":  # no wrapper without declarations: Gemini rejects it
        found = []
        for wrapper in tools:
            if "functionDeclarations" not in wrapper:
                found.append(wrapper)  # a built-in tool
                continue
            declarations = [d for d in wrapper["functionDeclarations"] if d.get("name") in names]
            if declarations:
                found.append({**wrapper, "functionDeclarations": declarations})
        return found
    if target == "bedrock" and isinstance(tools, Mapping):  # the toolConfig
        return {**tools, "tools": subset(target, tools["tools"], names)}
    kept = []
    for entry in tools:
        name = function_name(target, entry)
        if name is not None:
            if name in names:
                kept.append(entry)
        elif isinstance(entry, Mapping) and entry.get("type") == "namespace":
            inner = [t for t in entry.get("tools", ()) if t.get("name") in names]
            if inner:
                kept.append(_namespace(entry, inner))
        else:
            kept.append(entry)
    if not any(_deferred(entry) for entry in kept):
        kept = [entry for entry in kept if not _is_search(entry)]
    return kept


def sendable(target: str, tools: Any, toolset: str | None) -> Any:
    """`tools` as to_<target>() gives them; a ValueError for a Bedrock toolConfig without
    tools, which Bedrock rejects (the request goes without toolConfig instead)."""
    if target == "bedrock" and isinstance(tools, Mapping) and not tools.get("tools"):
        what = f"toolset {toolset!r}" if toolset is not None else "The package"
        raise ValueError(
            f"{what} holds no tool for bedrock (each excludes it), and Bedrock rejects a "
            "toolConfig without tools: send the request without toolConfig"
        )
    return tools


def _deferred(entry: Any) -> bool:
    if not isinstance(entry, Mapping):
        return False
    if entry.get("type") == "namespace":  # defer_loading is on the functions inside
        return any(_deferred(tool) for tool in entry.get("tools", ()))
    return bool(entry.get("defer_loading"))


def _namespace(entry: Mapping[str, Any], inner: list[Any]) -> dict[str, Any]:
    """A namespace tool holding only `inner`; a description that lists its tools, as the
    generator writes it, lists those that remain."""
    listed = ", ".join(str(t.get("name")) for t in entry.get("tools", ()))
    description = entry.get("description")
    if isinstance(description, str) and description.endswith(": " + listed):
        kept = ", ".join(str(t.get("name")) for t in inner)
        return {**entry, "description": description[: -len(listed)] + kept, "tools": inner}
    return {**entry, "tools": inner}


def allowed_tools(
    target: str, tools: Any, names: Sequence[str], mode: str = "auto"
) -> dict[str, Any]:
    """The provider's restriction of a request to `names` (as its file spells them) while
    `tools` (its full list) is sent: OpenAI Chat's nested and Responses' flat `allowed_tools`
    tool_choice, Gemini's `toolConfig` with `allowedFunctionNames`. `mode="required"` makes the
    model call one of them."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if target in NO_RESTRICTION:
        raise ValueError(NO_RESTRICTION[target])
    if target == "openai":
        return {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": mode,
                "tools": [{"type": "function", "function": {"name": n}} for n in names],
            },
        }
    if target == "openai_responses":
        allowed: list[dict[str, Any]] = [{"type": "function", "name": n} for n in names]
        for entry in tools:  # hosted tools stay usable
            kind = entry.get("type")
            if kind in ("function", "namespace") or _is_search(entry):
                continue
            if kind == "mcp":
                allowed.append({"type": "mcp", "server_label": entry.get("server_label")})
            else:
                allowed.append({"type": kind})
        return {"type": "allowed_tools", "mode": mode, "tools": allowed}
    if target == "gemini":
        # VALIDATED: a call to one of them or text (AUTO ignores allowedFunctionNames); ANY: a call
        return {
            "functionCallingConfig": {
                "mode": "VALIDATED" if mode == "auto" else "ANY",
                "allowedFunctionNames": list(names),
            }
        }
    raise ValueError(f"unknown target {target!r}")


# -- what a generated package's module functions call ----------------------------------------


def _sent_names(package: str, target: str) -> dict[str, str]:
    if _schema_text(package, "aliases") is None:
        return {}
    aliases = load_schema(package, "aliases").get("tools", {}).get(target, {})
    return {name: alias for alias, name in aliases.items()}


def provider_tools(
    package: str, target: str, toolsets: Mapping[str, Sequence[str]], toolset: str | None
) -> Any:
    """A generated package's `to_<target>(toolset)`: its schema file, or a toolset's part."""
    tools = load_schema(package, target)
    if toolset is not None:
        sent = _sent_names(package, target)
        tools = subset(target, tools, {sent.get(n, n) for n in members(toolsets, toolset)})
    return sendable(target, tools, toolset)


def restriction(
    package: str,
    target: str,
    toolsets: Mapping[str, Sequence[str]],
    toolset: str,
    mode: str = "auto",
) -> dict[str, Any]:
    """A generated package's `allowed_tools(target, toolset, mode=)`."""
    sent = _sent_names(package, target)
    names = [sent.get(n, n) for n in members(toolsets, toolset)]
    tools = [] if target in NO_RESTRICTION else load_schema(package, target)
    return allowed_tools(target, tools, names, mode)
