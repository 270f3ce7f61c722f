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
    tool_timeout: seconds each tool call may take before it becomes an error result.
    on_tool_call: called with each ToolCall before it runs (sync or async); return a ToolResult
        to answer without running the tool (for approval), or None to run it.
    on_tool_result: called with each ToolCall and its ToolResult (for logging).
    context: the ToolContext handlers receive (call id, tool and provider filled in).
Any other keyword argument goes to the SDK call unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from .core import (
    OnToolCall,
    OnToolResult,
    Policy,
    RawCall,
    ToolCall,
    ToolContext,
    ToolkitCore,
    ToolResult,
)
from .portal import run_sync

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
        allowed = toolkit._tool_subset(options.tools)
        self.toolkit = toolkit
        self.history = history
        self.max_turns = max_turns
        self.records: list[tuple[ToolCall, ToolResult]] = []
        self.policy = Policy(
            options.tool_timeout,
            allowed,
            options.on_tool_call,
            options.on_tool_result,
            self.records,
        )
        self.context = options.context
        if allowed is not None:  # the names this provider's file gives them (name_aliases)
            sent = toolkit.sent_names(self.NAME)
            allowed = frozenset(sent.get(name, name) for name in allowed)
        self.schemas = self.select(toolkit._provider_schema(self.NAME), allowed)
        self.base_request = request

    # Each provider fills these in.
    def select(self, schemas: Any, allowed: frozenset[str] | None) -> Any:
        raise NotImplementedError

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

    # The loop itself, sync and async.
    def run(self, send: Callable[..., Any]) -> RunResult:
        # On the shared event loop, sync handlers must not block it: they go to worker threads.
        policy = replace(self.policy, offload=True)
        response = None
        for turn in range(1, self.max_turns + 1):
            response = send(**self.request())
            if not self.absorb(response):
                return RunResult(response, self.history, turn, self.records)
            run_sync(self.answer(response, policy))
        raise self.exhausted(response)

    async def arun(self, send: Callable[..., Awaitable[Any]]) -> RunResult:
        response = None
        for turn in range(1, self.max_turns + 1):
            response = await send(**self.request())
            if not self.absorb(response):
                return RunResult(response, self.history, turn, self.records)
            await self.answer(response, self.policy)
        raise self.exhausted(response)

    def exhausted(self, response: Any) -> MaxTurnsExceeded:
        run = RunResult(response, self.history, self.max_turns, self.records)
        return MaxTurnsExceeded(self.NAME, self.max_turns, run)


def messages(history: Any) -> list[Any]:
    """The caller's history as a new list (a single string becomes one user message)."""
    if isinstance(history, str):
        return [{"role": "user", "content": history}]
    return list(history)
