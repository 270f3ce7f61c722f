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
from difflib import get_close_matches
from inspect import iscoroutinefunction
from types import MappingProxyType
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from .datatypes import ToolSpec
from .executors import Executor, SourceOptions, binding_kind, make_executor
from .nested import declared_names
from .schemas import _schema_text, load_schema
from .toolsets import members

H = TypeVar("H")
MAX_UNKNOWN = 10  # unknown argument names reported one by one
MAX_NAME = 100  # characters of an unknown name repeated in the message


class _Entry(NamedTuple):
    validate: Callable[[Any], BaseModel]
    fn: Callable[..., Any]
    is_async: bool
    # the argument names the tool declares, checked before `validate` (None: it takes others)
    declared: frozenset[str] | None = None


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
            declared = declared_arguments(spec.model)
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
                entries[name] = _Entry(getattr(bound, "validate", validate), bound, True, declared)
                continue
            fn = None if spec.method is None else getattr(handlers, spec.method, None)
            if fn is None or getattr(fn, "__isabstractmethod__", False):
                missing.append(spec.method or name)
                continue
            entries[name] = _Entry(validate, fn, iscoroutinefunction(fn), declared)
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


def declared_arguments(model: type[BaseModel]) -> frozenset[str] | None:
    """The argument names a tool's model takes, or None when it takes others too (nested.py)."""
    return declared_names(model)


def unknown_arguments_error(entry: _Entry, arguments: dict[str, Any]) -> ValidationError:
    """Why a call naming arguments the tool does not declare is refused: what the declared ones
    get wrong (pydantic's own errors, first), then each unknown name with the closest declared
    one. A model that wrote a body's fields flat, or misspelt one, is told so, and nothing is
    sent or run (pydantic would drop the name silently, and a REST call go out without it)."""
    declared = entry.declared or frozenset()
    errors = []
    try:
        entry.validate({k: v for k, v in arguments.items() if k in declared})
    except ValidationError as exc:
        errors = [_kept(error) for error in exc.errors(include_url=False)]
    unknown = unknown_arguments(arguments, declared, sorted(declared))
    return ValidationError.from_exception_data("arguments", errors + unknown)


def _kept(error: Any) -> Any:
    """A pydantic error as it was worded, to be raised again beside others."""
    text = PydanticCustomError(error["type"], "{text}", {"text": error["msg"]})
    return {"type": text, "loc": error["loc"], "input": error.get("input")}


def unknown_arguments(
    arguments: dict[str, Any], declared: frozenset[str], known: list[str]
) -> list[Any]:
    """One error per name the tool does not declare, with the closest declared name (the
    first MAX_UNKNOWN of them, each name cut at MAX_NAME characters: a model's text is echoed
    back, never without bound)."""
    errors: list[Any] = []
    unknown = [key for key in arguments if key not in declared]
    for key in unknown[:MAX_UNKNOWN]:
        name = str(key)
        shown = name if len(name) <= MAX_NAME else f"{name[:MAX_NAME]}..."
        close = get_close_matches(name, known, n=1, cutoff=0.6) if known and name == shown else []
        if close:
            text = f"not an argument of this tool (did you mean {close[0]!r}?"
        elif known:
            listed = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
            text = f"not an argument of this tool (its arguments: {listed}"
        else:
            text = "not an argument of this tool (it takes no arguments"
        text += "; the call was not made)"
        errors.append(
            {
                "type": PydanticCustomError("unknown_argument", "{text}", {"text": text}),
                "loc": (shown,),
                "input": arguments[key],
            }
        )
    if len(unknown) > MAX_UNKNOWN:
        more = f"and {len(unknown) - MAX_UNKNOWN} more arguments this tool does not take"
        errors.append(
            {
                "type": PydanticCustomError("unknown_argument", "{text}", {"text": more}),
                "loc": (),
                "input": None,
            }
        )
    return errors
