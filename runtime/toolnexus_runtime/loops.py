"""Tool loops: run a conversation through a provider's official client until the model answers.

Each loop sends the tools, executes every tool call through `execute`, appends the replies in the
shape the provider requires, and repeats until a turn has no tool calls. The provider's client is
yours, already configured; no SDK is imported here. Each provider module in
`toolnexus_runtime.providers` supplies one `Conversation` subclass.

Keyword arguments every loop takes:
    max_turns: the most model calls to make; reaching it raises MaxTurnsExceeded (its `.run`
        holds the history so far), never an endless loop.
    tools: names of the tools to offer in this request (default: all); a call to any other
        tool is answered with an unknown-tool error result.
    toolset: the name of a toolset (the package's TOOLSETS) to offer instead of `tools`.
Tools with defer_loading are found through the provider's tool search (Anthropic, OpenAI
Responses: in the schema file), elsewhere through a `search_tools` function the loop answers
itself (toolnexus_runtime.search). Server-executed blocks (hosted tools, tool search) stay in
the history and are never dispatched.
    tool_timeout: seconds each tool call may take before it becomes an error result.
    on_tool_call: called with each ToolCall before it runs (sync or async); return a ToolResult
        to answer without running the tool (for approval), or None to run it.
    on_tool_result: called with each ToolCall and its ToolResult (for logging).
    context: the ToolContext handlers receive (call id, tool and provider filled in).
Any other keyword argument goes to the SDK call unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from inspect import isawaitable
from typing import Any, ClassVar

from . import search
from .core import ToolkitCore
from .datatypes import (
    OnToolCall,
    OnToolResult,
    Policy,
    RawCall,
    ToolCall,
    ToolContext,
    ToolResult,
)
from .toolsets import function_name, subset

DEFAULT_MAX_TURNS = 10


@dataclass
class RunResult:
    """A finished conversation: the final response, the whole history, and every tool call."""

    response: Any
    """The provider's last response (the turn without tool calls)."""
    messages: list[Any]
    """The whole history in the provider's request shape, ready to send again."""
    turns: int
    """How many times the model was called."""
    tool_calls: list[tuple[ToolCall, ToolResult]] = field(default_factory=list)
    """Every tool call the model made, with its result, in order."""


class MaxTurnsExceeded(RuntimeError):
    """The model was still calling tools when `max_turns` model turns had been used."""

    def __init__(self, provider: str, max_turns: int, run: RunResult) -> None:
        super().__init__(
            f"The {provider} model was still calling tools after max_turns={max_turns} model "
            "turns; stopped without a final answer. The history so far (tool results "
            "included) is on `.run.messages`: raise max_turns, or send it again to continue."
        )
        self.provider = provider
        self.max_turns = max_turns
        self.run = run


@dataclass(frozen=True)
class LoopOptions:
    """The loop keyword arguments shared by every provider (see the module docstring)."""

    max_turns: int = DEFAULT_MAX_TURNS
    tools: Collection[str] | None = None
    tool_timeout: float | None = None
    on_tool_call: OnToolCall | None = None
    on_tool_result: OnToolResult | None = None
    context: ToolContext | None = None
    toolset: str | None = None


def dump(obj: Any) -> Any:
    """An SDK response object as the plain dict a request takes (dicts pass through)."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


class Conversation:
    """One provider: how its responses carry tool calls and how replies go back (the round
    trip, static so a Toolkit uses it without a loop), and its side of the loop (build a
    request, read a response, answer its calls)."""

    NAME: ClassVar[str]

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        raise NotImplementedError

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> Any:
        raise NotImplementedError

    def __init__(
        self,
        toolkit: ToolkitCore[Any],
        history: list[Any],
        request: dict[str, Any],
        options: LoopOptions,
    ) -> None:
        max_turns = options.max_turns
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive integer, not {max_turns!r}")
        if request.get("stream"):
            raise ValueError(
                "a tool loop reads each model turn whole: stream=True is not supported here "
                "(stream the final answer yourself from run.messages, or drop stream=True)"
            )
        allowed = toolkit._tool_subset(options.tools, options.toolset)
        self.toolkit = toolkit
        self.history = history
        self.max_turns = max_turns
        self.records: list[tuple[ToolCall, ToolResult]] = []
        on_tool_call = options.on_tool_call
        self.context = options.context
        self.sent = toolkit.sent_names(self.NAME)
        offered = allowed
        if allowed is not None:  # the names this provider's file gives them (name_aliases)
            offered = frozenset(self.sent.get(name, name) for name in allowed)
        self.schemas = self.select(toolkit._provider_schema(self.NAME), offered)
        self.deferred: dict[str, str] = {}  # sent name -> description, not loaded yet
        if self.NAME in search.TARGETS and toolkit._has_deferred():
            self.deferred = {
                self.sent.get(t["name"], t["name"]): t.get("description", "")
                for t in toolkit._provider_schema("tools")
                if t.get("defer_loading") and (allowed is None or t["name"] in allowed)
            }
        if self.deferred:  # loaded tools plus search_tools, answered here
            self.catalogue = search.Catalogue(self.deferred)
            self.loaded: set[str] = set()
            self.full = self.schemas
            self._offer()
            on_tool_call = self._searching(options.on_tool_call)
        self.policy = Policy(
            options.tool_timeout,
            allowed,
            on_tool_call,
            options.on_tool_result,
            self.records,
        )
        self.base_request = request
        self.raw = False  # whether the client answers raw (set by run/arun, see sender())
        self.client: Any = None  # the SDK client `create` belongs to, when the loop has it

    def select(self, schemas: Any, allowed: frozenset[str] | None) -> Any:
        """The tools this loop sends, from the provider's file (allowed: names as it spells
        them; None: all)."""
        return subset(self.NAME, schemas, allowed)

    # -- client-side tool search (providers without one) ---------------------------------------

    def _offer(self) -> None:
        kept = [name for name in self.deferred if name not in self.loaded]
        visible = None if not kept else _all_but(self.NAME, self.full, kept)
        self.schemas = search.add_search_tool(self.NAME, self.select(self.full, visible))

    def _searching(self, hook: OnToolCall | None) -> OnToolCall:
        async def on_tool_call(call: ToolCall) -> ToolResult | None:
            if call.name != search.NAME:
                return None if hook is None else await _maybe(hook(call))
            query, limit = search.arguments(call.arguments)
            waiting = [name for name in self.deferred if name not in self.loaded]
            found = self.catalogue.search(query, limit, waiting) if waiting else []
            self.loaded.update(found)
            self._offer()
            return ToolResult(search.found_text(found, self.deferred), data={"loaded": found})

        return on_tool_call

    # Each provider fills these in.

    def request(self) -> dict[str, Any]:
        raise NotImplementedError

    def absorb(self, response: Any) -> bool:
        """Append the model's turn to the history; true when it calls tools."""
        raise NotImplementedError

    def calls_of(self, response: Any) -> Any:
        """What the provider's round trip reads the turn's calls from."""
        raise NotImplementedError

    def append(self, replies: Any) -> None:
        """Append the round trip's replies to the history."""
        raise NotImplementedError

    async def answer(self, response: Any, policy: Policy) -> None:
        replies = await self.toolkit._round_trip(
            self, self.calls_of(response), self.context, policy
        )
        self.append(replies)

    def sender(self, create: Callable[..., Any]) -> tuple[Callable[..., Any], bool]:
        """What the loop calls for a model turn given the SDK's method (and `self.client`, the
        client it belongs to), and whether that answers raw: with an object the provider's
        read() takes the JSON from and whose `.parse()` builds the SDK's own response object
        (openai's APIResponse)."""
        return create, False

    def read(self, response: Any) -> Any:
        """The turn as absorb() and answer() take it (a raw response is read by the provider
        that asked for it)."""
        return response

    async def aread(self, response: Any) -> Any:
        """read() in the async loop (where checking a raw response may need an await)."""
        return self.read(response)

    def final(self, response: Any) -> Any:
        """The response object a RunResult holds (the SDK's own, also when read raw)."""
        return response.parse() if self.raw else response

    # The loop itself, sync and async.
    def run(self, create: Callable[..., Any], client: Any = None) -> RunResult:
        self.client = client
        send, self.raw = self.sender(create)
        response = None
        for turn in range(1, self.max_turns + 1):
            response = send(**self.request())
            data = self.read(response)
            if not self.absorb(data):
                return RunResult(self.final(response), self.history, turn, self.records)
            # From this thread: sync handlers run here and in worker threads, what needs an
            # event loop on the runtime's (see ToolkitCore._execute_all_sync).
            toolkit = self.toolkit
            self.append(
                toolkit._round_trip_sync(self, self.calls_of(data), self.context, self.policy)
            )
        raise self.exhausted(self.final(response))

    async def arun(self, create: Callable[..., Awaitable[Any]], client: Any = None) -> RunResult:
        self.client = client
        send, self.raw = self.sender(create)
        response = None
        for turn in range(1, self.max_turns + 1):
            response = await send(**self.request())
            data = await self.aread(response)
            if not self.absorb(data):
                final = await _maybe(self.final(response))  # openai's parse() may become async
                return RunResult(final, self.history, turn, self.records)
            await self.answer(data, self.policy)
        raise self.exhausted(await _maybe(self.final(response)))

    def exhausted(self, response: Any) -> MaxTurnsExceeded:
        run = RunResult(response, self.history, self.max_turns, self.records)
        return MaxTurnsExceeded(self.NAME, self.max_turns, run)


async def _maybe(value: Any) -> Any:
    return await value if isawaitable(value) else value


def plain(value: Any) -> Any:
    """Request data as JSON values, as the SDK would send it: pydantic models anywhere inside are
    dumped the way its parameter transform dumps them, the SDK's `omit`/`NOT_GIVEN` markers in a
    dict are left out and any other iterable (a generator, a set) becomes a list, as that
    transform does; data holding none of these is returned as is."""
    if isinstance(value, dict):
        items = {key: plain(item) for key, item in value.items() if not omitted(item)}
        same = len(items) == len(value) and all(items[k] is item for k, item in value.items())
        return value if same else items
    if isinstance(value, (list, tuple)):
        elements = [plain(item) for item in value]
        same = all(a is b for a, b in zip(elements, value, strict=True))
        return value if same and isinstance(value, list) else elements
    if hasattr(value, "model_dump"):
        exclude = getattr(value, "__api_exclude__", None)
        return value.model_dump(mode="json", exclude_unset=True, exclude=exclude)
    if isinstance(value, Mapping):
        return plain(dict(value))
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes, bytearray)):
        return [plain(item) for item in value]
    return value


def omitted(value: Any) -> bool:
    """The official SDK's "not given" markers (`omit`, `NOT_GIVEN`): left out, as create leaves
    them."""
    kind = type(value)
    return kind.__name__ in ("Omit", "NotGiven") and kind.__module__.startswith("openai")


def _all_but(target: str, tools: Any, hidden: Sequence[str]) -> frozenset[str]:
    """The names of every function tool in a provider's list but the hidden ones."""
    if target == "gemini":
        entries = [d for wrapper in tools for d in wrapper.get("functionDeclarations", ())]
        names = {d.get("name") for d in entries}
    else:
        names = {function_name(target, entry) for entry in tools}
    return frozenset(name for name in names if name is not None and name not in hidden)


def tools_key(tools: Any) -> dict[str, Any]:
    """`{"tools": tools}`, or nothing when there are none (a toolset without a tool for this
    provider): a request without tools, since some providers reject an empty list."""
    return {"tools": tools} if tools else {}


def messages(history: Any) -> list[Any]:
    """The caller's history as a new list (a single string becomes one user message)."""
    if isinstance(history, str):
        return [{"role": "user", "content": history}]
    return list(history)
