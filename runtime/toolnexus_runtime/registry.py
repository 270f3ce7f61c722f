"""What a toolkit has registered: its tools by name, each with the validator of its arguments
and the function that runs it (a handler method, or a bound tool's function from the executor of
its kind), and what the generated package says about them (descriptions, provider schemas,
toolsets).

The parts of `ToolkitCore` build on one another, each in its own module: this registry; how one
call runs (execution.py); how a batch of calls runs under a policy (batches.py); how a
provider's payload becomes calls and replies (roundtrips.py); construction and lifecycle
(core.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from inspect import iscoroutinefunction
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel

from .datatypes import ToolSpec
from .executors import Executor, SourceOptions, binding_kind, make_executor
from .schemas import _schema_text, load_schema
from .toolsets import members

H = TypeVar("H")


class _Entry(NamedTuple):
    validate: Callable[[Any], BaseModel]
    fn: Callable[..., Any]
    is_async: bool


class Registry(Generic[H]):
    """The tools a toolkit runs, by name; what its generated package says about them."""

    TOOLS: Mapping[str, ToolSpec] = MappingProxyType({})
    SCHEMAS: str | None = None
    TOOLSETS: Mapping[str, tuple[str, ...]] = MappingProxyType({})  # toolset -> its tools

    handlers: H
    tools: Mapping[str, ToolSpec]
    _entries: dict[str, _Entry]
    _executors: dict[str, Executor]
    _unknown_hint: str

    def _register(
        self, handlers: H, tools: Mapping[str, ToolSpec] | None, sources: SourceOptions | None
    ) -> None:
        """Bind every tool of the table (TOOLS unless `tools` is given) to what runs it; a
        TypeError naming every handler method that is missing."""
        tools = self.TOOLS if tools is None else tools
        missing = []
        entries: dict[str, _Entry] = {}
        executors: dict[str, Executor] = {}
        sources = sources or SourceOptions()
        for name, spec in tools.items():
            # The model's validator itself: what model_validate calls, without its per-call
            # keyword handling (half the cost of a small model's validation).
            validate = spec.model.__pydantic_validator__.validate_python
            if spec.binding is not None:  # a tool from another source: its executor runs it
                curated = spec.binding.get("curated") if len(spec.binding) == 1 else None
                source = spec if curated is None else spec._replace(binding=curated["binding"])
                assert source.binding is not None
                kind = binding_kind(source.binding)
                if kind not in executors:
                    executors[kind] = make_executor(kind, self, sources)
                bound = executors[kind].bind(source)
                if curated is not None:  # overrides: the call mapped back to the source's names
                    from .executors.curated import Curated

                    bound = Curated(name, spec.model, bound, curated)
                # A bound tool may validate for itself (and be handed the arguments as sent).
                entries[name] = _Entry(getattr(bound, "validate", validate), bound, True)
                continue
            fn = None if spec.method is None else getattr(handlers, spec.method, None)
            if fn is None or getattr(fn, "__isabstractmethod__", False):
                missing.append(spec.method or name)
                continue
            entries[name] = _Entry(validate, fn, iscoroutinefunction(fn))
        if missing:
            raise TypeError(
                f"{type(handlers).__name__} does not implement the tool method(s): "
                f"{', '.join(missing)}. Add one method per tool (see ToolHandlers)."
            )
        self.handlers = handlers
        self.tools = tools
        self._entries = entries
        self._executors = executors
        self._unknown_hint = ", ".join(tools) or "(none)"

    def descriptions(self) -> dict[str, str]:
        """Each tool's description (from the generated package's schemas/tools.json)."""
        if self.SCHEMAS is None:
            return {}
        return {t["name"]: t.get("description", "") for t in load_schema(self.SCHEMAS, "tools")}

    def _provider_schema(self, target: str) -> Any:
        """The tools in one provider's shape (from the generated package's schemas/)."""
        if self.SCHEMAS is None:
            raise NotImplementedError(
                f"{type(self).__name__} has no provider schemas (SCHEMAS names no package)"
            )
        return load_schema(self.SCHEMAS, target)

    def _has_deferred(self) -> bool:
        """Whether a tool has defer_loading (without parsing schemas/tools.json when none has)."""
        text = None if self.SCHEMAS is None else _schema_text(self.SCHEMAS, "tools")
        return text is not None and '"defer_loading": true' in text

    def _tool_subset(self, tools: Any, toolset: str | None = None) -> frozenset[str] | None:
        """Validate a caller's choice of tool names (or of a toolset); None means every tool."""
        if toolset is not None:
            if tools is not None:
                raise ValueError("pass tools= or toolset=, not both")
            return frozenset(members(self.TOOLSETS, toolset))
        if tools is None:
            return None
        chosen = frozenset([tools] if isinstance(tools, str) else tools)
        unknown = sorted(chosen - self.tools.keys())
        if unknown:
            raise ValueError(
                f"Unknown tool name(s) in tools=: {', '.join(unknown)}. "
                f"Available tools: {self._unknown_hint}."
            )
        if not chosen:
            raise ValueError("tools= names no tool; pass None to offer every tool.")
        return chosen
