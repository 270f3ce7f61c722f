"""`Toolkit`: the execution core plus, for each provider, its schemas, round trip and tool loop.

A generated package subclasses it, bound to its dispatch table (`TOOLS`) and its provider schema
files (`SCHEMAS`). Every sync method here runs the calls from the calling thread: sync handlers
in it (the first call of a response) and in worker threads (the others, at the same time), and
what needs an event loop (async handlers and hooks, timeouts) on the runtime's long-lived one
(`portal.run_sync`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from os import PathLike
from typing import Any, TypeVar

from .core import ToolkitCore
from .datatypes import ErrorMessage, OnToolCall, OnToolResult, Policy, ToolContext, ToolSpec
from .execution import DEFAULT_THREADS
from .executors import SourceOptions
from .loops import DEFAULT_MAX_TURNS, Conversation, LoopOptions, RunResult
from .loops import messages as _messages
from .providers import bedrock, gemini
from .providers.anthropic import Anthropic
from .providers.bedrock import Bedrock
from .providers.gemini import Gemini
from .providers.openai import OpenAIChat
from .providers.openai_responses import OpenAIResponses
from .toolsets import NO_RESTRICTION, allowed_tools, members, sendable, subset

H = TypeVar("H")


class Toolkit(ToolkitCore[H]):
    """Your handlers plus a dispatch table: execute, provider schemas, round trips, tool loops.

    `Toolkit(handlers, timeout=None, error_message=None)`: `timeout` (seconds) applies to every
    call unless a call gives its own; `error_message(tool_name, exc) -> str` decides what the
    model sees when a handler raises anything but `ToolError`, or a tool source fails
    (`SourceError`) (the exception is logged on the `toolnexus_runtime` logger either way). `max_threads` (default 40) bounds the sync handlers
    that run in worker threads at once on an event loop you await `execute` on (a server's).
    `instrument=True` (or a TracerProvider) emits an OpenTelemetry span per call (see
    `toolnexus_runtime.tracing`).

    Tools that come from other sources need no handler method; what they reach is given here:
    `mcp_config` (a path to an `mcp.json` or its dict) for tools snapshotted from MCP servers;
    `workspace`, `allow_shell`, `fetch_allow`, `output_limit` and `ask` for the built-in tools
    (`output_limit`, characters, also caps an MCP tool's result: text cut with a note,
    structured content over it refused);
    `http_client` (an `httpx.AsyncClient` of your own) and `base_url` (what relative URLs are
    appended to instead of the build's base_url: one URL, or a mapping {build-time: run-time})
    for tools bound to HTTP endpoints.
    `await tk.aclose()` (or `async with tk:`) closes what they hold open.
    """

    def __init__(
        self,
        handlers: H,
        *,
        tools: Mapping[str, ToolSpec] | None = None,
        timeout: float | None = None,
        error_message: ErrorMessage | None = None,
        max_threads: int = DEFAULT_THREADS,
        instrument: Any = False,
        mcp_config: str | PathLike[str] | Mapping[str, Any] | None = None,
        workspace: str | PathLike[str] | None = None,
        allow_shell: bool = True,
        fetch_allow: Collection[str] | None = None,
        output_limit: int = 30_000,
        ask: Callable[..., Any] | None = None,
        http_client: Any = None,
        base_url: str | Mapping[str, str] | None = None,
    ) -> None:
        sources = SourceOptions(
            mcp_config,
            workspace,
            allow_shell,
            fetch_allow,
            output_limit,
            ask,
            http_client,
            base_url,
        )
        super().__init__(
            handlers,
            tools=tools,
            timeout=timeout,
            error_message=error_message,
            max_threads=max_threads,
            sources=sources,
        )
        if instrument:
            from .tracing import trace_calls  # OpenTelemetry only when asked for

            trace_calls(self, instrument)

    # -- provider schemas (fresh copies of the generated package's schemas/) ------------------

    def to_gemini(self, toolset: str | None = None) -> list[dict[str, Any]]:
        """Gemini `tools`: one functionDeclarations wrapper holding every tool (or only a toolset's)."""
        return self._tools_for("gemini", toolset)  # type: ignore[no-any-return]

    def to_openai(self, toolset: str | None = None) -> list[dict[str, Any]]:
        """OpenAI Chat Completions `tools` (or only a toolset's)."""
        return self._tools_for("openai", toolset)  # type: ignore[no-any-return]

    def to_openai_responses(self, toolset: str | None = None) -> list[dict[str, Any]]:
        """OpenAI Responses `tools` (or only a toolset's)."""
        return self._tools_for("openai_responses", toolset)  # type: ignore[no-any-return]

    def to_anthropic(self, toolset: str | None = None) -> list[dict[str, Any]]:
        """Anthropic Messages `tools` (or only a toolset's)."""
        return self._tools_for("anthropic", toolset)  # type: ignore[no-any-return]

    def to_mcp(self, toolset: str | None = None) -> list[dict[str, Any]]:
        """MCP `tools/list` tools (or only a toolset's)."""
        return self._tools_for("mcp", toolset)  # type: ignore[no-any-return]

    def to_bedrock(self, toolset: str | None = None) -> dict[str, Any]:
        """Bedrock Converse `toolConfig` (or only a toolset's)."""
        return self._tools_for("bedrock", toolset)  # type: ignore[no-any-return]

    def _tools_for(self, target: str, toolset: str | None) -> Any:
        tools = self._provider_schema(target)
        if toolset is not None:
            sent = self.sent_names(target)
            names = {sent.get(n, n) for n in members(self.TOOLSETS, toolset)}
            tools = subset(target, tools, names)
        return sendable(target, tools, toolset)

    def allowed_tools(self, target: str, toolset: str, *, mode: str = "auto") -> dict[str, Any]:
        """The provider's restriction of a request to a toolset while the full list is sent (so
        prompt caches stay warm): OpenAI Chat's nested and Responses' flat `allowed_tools`
        `tool_choice`, Gemini's `toolConfig` (`functionCallingConfig.allowedFunctionNames`).
        Anthropic, Bedrock and MCP have none (ValueError saying what to do instead)."""
        sent = self.sent_names(target)
        names = [sent.get(n, n) for n in members(self.TOOLSETS, toolset)]
        tools = [] if target in NO_RESTRICTION else self._provider_schema(target)
        return allowed_tools(target, tools, names, mode)

    def _policy(self, timeout: float | None, toolset: str | None) -> Policy:
        return Policy(timeout, self._tool_subset(None, toolset))

    # -- round trips: execute every call of one response, return what to send back -----------
    # `toolset=`: a call to a tool outside it is answered with an unknown-tool error result.

    async def agemini_reply(
        self,
        parts: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> dict[str, Any]:
        """Execute every functionCall part; return the `user` content of functionResponse parts.

        Replies are matched by name and carry the call's `id` when Gemini sent one."""
        return await self._round_trip(Gemini, parts, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    def gemini_reply(
        self,
        parts: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> dict[str, Any]:
        """Sync twin of `agemini_reply`."""
        return self._round_trip_sync(Gemini, parts, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    async def aopenai_tool_messages(
        self,
        message: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Execute every tool call of an assistant message; return the `tool` messages, in order."""
        return await self._round_trip(OpenAIChat, message, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    def openai_tool_messages(
        self,
        message: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sync twin of `aopenai_tool_messages`."""
        return self._round_trip_sync(OpenAIChat, message, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    async def aopenai_responses_outputs(
        self,
        output_items: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Execute every `function_call` output item; return `function_call_output` input items."""
        policy = self._policy(timeout, toolset)
        return await self._round_trip(OpenAIResponses, output_items, ctx, policy)  # type: ignore[no-any-return]

    def openai_responses_outputs(
        self,
        output_items: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sync twin of `aopenai_responses_outputs`."""
        return self._round_trip_sync(  # type: ignore[no-any-return]
            OpenAIResponses, output_items, ctx, self._policy(timeout, toolset)
        )

    async def aanthropic_tool_results(
        self,
        content: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Execute every `tool_use` block; return `tool_result` blocks for the next user message."""
        return await self._round_trip(Anthropic, content, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    def anthropic_tool_results(
        self,
        content: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sync twin of `aanthropic_tool_results`."""
        return self._round_trip_sync(Anthropic, content, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    async def abedrock_tool_results(
        self,
        content: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Execute every `toolUse` block; return `toolResult` blocks for the next user message."""
        return await self._round_trip(Bedrock, content, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    def bedrock_tool_results(
        self,
        content: Any,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        toolset: str | None = None,
    ) -> list[dict[str, Any]]:
        """Sync twin of `abedrock_tool_results`."""
        return self._round_trip_sync(Bedrock, content, ctx, self._policy(timeout, toolset))  # type: ignore[no-any-return]

    # -- tool loops (see toolnexus_runtime.loops for the keyword arguments) -------------------

    def _conversation(
        self,
        kind: type[Conversation],
        history: list[Any],
        request: dict[str, Any],
        max_turns: int,
        tools: Collection[str] | None,
        toolset: str | None,
        tool_timeout: float | None,
        on_tool_call: OnToolCall | None,
        on_tool_result: OnToolResult | None,
        context: ToolContext | None,
    ) -> Conversation:
        options = LoopOptions(
            max_turns, tools, tool_timeout, on_tool_call, on_tool_result, context, toolset
        )
        return kind(self, history, request, options)

    def run_openai(
        self,
        client: Any,
        *,
        model: str,
        messages: Sequence[Any] | str,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Run a Chat Completions conversation (`openai.OpenAI`) until the model answers.

        Each assistant message is followed by one `tool` message per `tool_call_id`."""
        return self._conversation(
            OpenAIChat, _messages(messages), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).run(client.chat.completions.create, client)  # fmt: skip

    async def arun_openai(
        self,
        client: Any,
        *,
        model: str,
        messages: Sequence[Any] | str,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Async twin of `run_openai`, for `openai.AsyncOpenAI`."""
        return await self._conversation(
            OpenAIChat, _messages(messages), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).arun(client.chat.completions.create, client)  # fmt: skip

    def run_openai_responses(
        self,
        client: Any,
        *,
        model: str,
        input: Sequence[Any] | str,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Run a Responses conversation (`openai.OpenAI`) until the model answers.

        Output items (reasoning included) are kept in the input list, each `function_call`
        followed by its `function_call_output` with the same `call_id`."""
        return self._conversation(
            OpenAIResponses, _messages(input), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).run(client.responses.create)  # fmt: skip

    async def arun_openai_responses(
        self,
        client: Any,
        *,
        model: str,
        input: Sequence[Any] | str,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Async twin of `run_openai_responses`, for `openai.AsyncOpenAI`."""
        return await self._conversation(
            OpenAIResponses, _messages(input), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).arun(client.responses.create)  # fmt: skip

    def run_anthropic(
        self,
        client: Any,
        *,
        model: str,
        messages: Sequence[Any] | str,
        max_tokens: int = 4096,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Run a Messages conversation (`anthropic.Anthropic`) until the model answers.

        The assistant's content (thinking blocks and signatures included) is kept as sent; the
        `tool_result` blocks, with `is_error`, make up the next user message."""
        request = {"model": model, "max_tokens": max_tokens, **kwargs}
        return self._conversation(
            Anthropic, _messages(messages), request, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).run(client.messages.create)  # fmt: skip

    async def arun_anthropic(
        self,
        client: Any,
        *,
        model: str,
        messages: Sequence[Any] | str,
        max_tokens: int = 4096,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Async twin of `run_anthropic`, for `anthropic.AsyncAnthropic`."""
        request = {"model": model, "max_tokens": max_tokens, **kwargs}
        return await self._conversation(
            Anthropic, _messages(messages), request, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).arun(client.messages.create)  # fmt: skip

    def run_gemini(
        self,
        client: Any,
        *,
        model: str,
        contents: Any,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Run a Gemini conversation (`google.genai.Client`) until the model answers.

        The tools join `config` (a dict or GenerateContentConfig, kept otherwise), automatic
        function calling is off, model turns keep their `thoughtSignature`, and every
        functionResponse echoes its call's `id`."""
        return self._conversation(
            Gemini, gemini.contents(contents), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).run(client.models.generate_content)  # fmt: skip

    async def arun_gemini(
        self,
        client: Any,
        *,
        model: str,
        contents: Any,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Async twin of `run_gemini`, through `client.aio`."""
        return await self._conversation(
            Gemini, gemini.contents(contents), {"model": model, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).arun(client.aio.models.generate_content)  # fmt: skip

    def run_bedrock(
        self,
        client: Any,
        *,
        modelId: str,
        messages: Sequence[Any] | str,
        max_turns: int = DEFAULT_MAX_TURNS,
        tools: Collection[str] | None = None,
        toolset: str | None = None,
        tool_timeout: float | None = None,
        on_tool_call: OnToolCall | None = None,
        on_tool_result: OnToolResult | None = None,
        context: ToolContext | None = None,
        **kwargs: Any,
    ) -> RunResult:
        """Run a Converse conversation (boto3 `bedrock-runtime`, which has no async client).

        `toolConfig` goes with every request (your `toolChoice` kept), as Bedrock requires once
        the history holds tool blocks; `toolResult` blocks carry `status`."""
        return self._conversation(
            Bedrock, bedrock.messages(messages), {"modelId": modelId, **kwargs}, max_turns, tools,
            toolset, tool_timeout, on_tool_call, on_tool_result, context,
        ).run(client.converse)  # fmt: skip
