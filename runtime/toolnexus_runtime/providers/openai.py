"""OpenAI Chat Completions: tool calls on the assistant message, one `tool` message per call."""

from __future__ import annotations

import inspect
import json
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from types import FunctionType, MethodType
from typing import Any

from ..datatypes import RawCall, ToolResult, get
from ..loops import Conversation, _maybe, dump, omitted, plain, tools_key


class OpenAIChat(Conversation):
    NAME = "openai"
    official: _Official | None = None

    @staticmethod
    def calls(payload: Any) -> list[RawCall]:
        """The calls of an assistant message (or of a whole ChatCompletion: its first choice)."""
        message = payload
        if get(message, "choices") is not None:
            message = get(get(message, "choices")[0], "message")
        found = []
        for call in get(message, "tool_calls") or ():
            function = get(call, "function")
            if function is not None:
                found.append(
                    RawCall(
                        get(function, "name") or "", get(function, "arguments"), get(call, "id")
                    )
                )
        return found

    @staticmethod
    def replies(calls: Sequence[RawCall], results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": call.call_id, "content": result.output}
            for call, result in zip(calls, results, strict=True)
        ]

    def select(self, schemas: Any, allowed: frozenset[str] | None) -> Any:
        return [t for t in schemas if allowed is None or t["function"]["name"] in allowed]

    def request(self) -> dict[str, Any]:
        if self.official is None:  # not the official SDK: the arguments as documented
            return {**self.base_request, "messages": self.history, **tools_key(self.schemas)}
        body = {**self.official.body, "messages": self.history, **tools_key(self.schemas)}
        return {"body": body, "options": self.official.options}

    def sender(self, create: Callable[..., Any]) -> tuple[Callable[..., Any], bool]:
        # The official SDK: `create` builds the same request, but walks every argument through
        # its typed-parameter transform (each message against every message type) and wraps
        # the call in layers that change nothing in JSON values; together about a sixth of a
        # turn's cost. So the loop sends the body `create` would send through the client's own
        # `post` (its auth, headers, retries, timeouts, errors, transport), reads tool turns
        # from the raw JSON, and has the SDK build its ChatCompletion for the final turn only.
        # The request is the same (tested against create's).
        self.official = _Official.of(create, self.client, self.base_request)
        if self.official is None:
            return create, False
        # JSON values from here on (a message object the caller passed is dumped once, as the
        # SDK would dump it).
        self.history = plain(self.history)
        return self.official.send, True

    def read(self, response: Any) -> Any:
        if not self.raw:
            return response
        if self.official is not None and self.official.strict:
            self.official.completion(response)  # every turn validated, as create would
        return json.loads(response.http_response.content)

    async def aread(self, response: Any) -> Any:
        if self.raw and self.official is not None and self.official.strict:
            # an AsyncAPIResponse's parse() is a coroutine: awaited, or the turn goes unchecked
            await _maybe(self.official.completion(response))
            return json.loads(response.http_response.content)
        return self.read(response)

    def final(self, response: Any) -> Any:
        if self.official is None:
            return response
        return self.official.completion(response)

    def absorb(self, response: Any) -> bool:
        message = get(get(response, "choices")[0], "message")
        self.history.append(assistant_message(message))
        return bool(get(message, "tool_calls"))

    def calls_of(self, response: Any) -> Any:
        return get(get(response, "choices")[0], "message")

    def append(self, replies: Any) -> None:
        self.history.extend(replies)


def assistant_message(message: Any) -> dict[str, Any]:
    """The assistant message as a request message (drops response-only fields)."""
    data = dump(message)
    kept: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    for key in ("refusal", "name", "function_call"):
        if data.get(key) is not None:
            kept[key] = data[key]
    if data.get("audio"):
        kept["audio"] = {"id": data["audio"]["id"]}
    if data.get("tool_calls"):
        kept["tool_calls"] = data["tool_calls"]
    return kept


# Keyword arguments of `create` that are request options, not body fields (as the SDK's own
# make_request_options maps them).
_OPTIONS = {"extra_headers": "headers", "extra_query": "params", "extra_body": "extra_json"}
_SIGNATURES: dict[type, frozenset[str]] = {}
_SDK_FUNCTIONS: dict[FunctionType, bool] = {}


class _Official:
    """The official `openai` client's `chat.completions.create`, sent as `create` sends it
    through the client's public `post` (the SDK's APIResponse: raw JSON, and `parse()` for the
    SDK's own ChatCompletion)."""

    def __init__(
        self, send: Callable[..., Any], body: dict[str, Any], options: Any, model: Any
    ) -> None:
        self.send = send
        self.body = body
        self.options = options
        self.model = model  # the SDK's ChatCompletion
        self.strict = False  # the client validates every response (_strict_response_validation)

    def completion(self, response: Any) -> Any:
        """The SDK's ChatCompletion for a response, as its `parse()` builds it: validated from
        the JSON in one strict step when it is exactly of the SDK's types (what parse() gives
        then, at a tenth of its cost); otherwise parse() itself (lenient, or the SDK's validation
        error when the client validates strictly)."""
        try:  # strict: JSON that parse() would keep as sent ("created": "123") is not coerced
            completion = self.model.model_validate_json(response.http_response.content, strict=True)
        except ValueError:  # pydantic's ValidationError included
            return response.parse()
        completion._request_id = response.request_id
        return completion

    @classmethod
    def of(
        cls, create: Callable[..., Any], client: Any, request: dict[str, Any]
    ) -> _Official | None:
        resource = getattr(create, "__self__", None)
        openai = sys.modules.get("openai")
        post = getattr(client, "post", None)
        if (
            openai is None
            or post is None
            or not _sdk_method(create, resource)
            or not type(resource).__module__.startswith("openai.resources.chat")
            or not type(client).__module__.startswith("openai")
        ):
            return None
        try:
            from openai.types.chat import ChatCompletion

            response_type = (
                openai.AsyncAPIResponse if inspect.iscoroutinefunction(post) else openai.APIResponse
            )
        except (ImportError, AttributeError):  # an SDK without them: create as documented
            return None
        accepted = _SIGNATURES.get(type(resource))
        if accepted is None:
            accepted = frozenset(inspect.signature(create).parameters)
            _SIGNATURES[type(resource)] = accepted
        body: dict[str, Any] = {}
        options: dict[str, Any] = {"security": {"bearer_auth": True}}
        for key, value in request.items():
            if key not in accepted:  # what create itself raises
                raise TypeError(f"create() got an unexpected keyword argument {key!r}")
            if omitted(value):
                continue
            if key in _OPTIONS:
                if value is not None:
                    options[_OPTIONS[key]] = value
            elif key == "timeout":
                options["timeout"] = value
            else:
                if isinstance(value, type):  # a response_format class: parse() takes those
                    raise TypeError(
                        f"{key}={value.__name__} is a class: the tool loop sends "
                        "chat.completions.create() arguments, which take its JSON schema "
                        "(chat.completions.parse() is what takes a pydantic class)"
                    )
                body[key] = plain(value)
        send = partial(post, "/chat/completions", cast_to=response_type[ChatCompletion])
        official = cls(send, body, options, ChatCompletion)
        official.strict = getattr(client, "_strict_response_validation", False) is True
        return official


def _sdk_method(create: Callable[..., Any], resource: Any) -> bool:
    """Whether `create` is the SDK's own method, not wrapped. Tracing and logging libraries
    (OpenTelemetry's and Langfuse's OpenAI instrumentation, a wrapper of your own) patch
    `Completions.create`, on the class or the client: the loop then calls `create` itself, so
    what they record and change still happens."""
    function = getattr(type(resource), "__dict__", {}).get("create")
    openai = sys.modules.get("openai")
    if (
        openai is None
        or type(create) is not MethodType
        or type(function) is not FunctionType  # not a proxy (wrapt's pass isinstance checks)
        or create.__func__ is not function
    ):
        return False
    own = _SDK_FUNCTIONS.get(function)
    if own is None:
        # Its code is the SDK's own (a functools.wraps wrapper copies the name and module, not
        # the code).
        package = os.path.dirname(os.path.abspath(openai.__file__ or "")) + os.sep
        own = os.path.abspath(function.__code__.co_filename).startswith(package)
        _SDK_FUNCTIONS[function] = own
    return own
