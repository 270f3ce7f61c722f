"""How a provider's payload becomes calls and replies: the calls of one response read by the
provider's module (providers/), their tool and argument names mapped back to the spec's (a
provider's file may name them otherwise: schemas/aliases.json), run as one batch, and the
results made the provider's reply, an invalid-arguments message naming what the model sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

from .aliases import _absent_nulls, _sent_place, _unalias
from .batches import Batches
from .datatypes import EMPTY_CONTEXT, Policy, Provider, RawCall, ToolContext, ToolResult
from .failures import _invalid_text
from .schemas import _schema_text, load_schema

H = TypeVar("H")


class RoundTrips(Batches[H]):
    """Provider round trips, and the name maps they (and integrations) go through."""

    _tool_aliases: dict[str, dict[str, str]]
    _argument_aliases: dict[str, dict[str, Any]]
    _null_maps: dict[str, dict[str, Any]]
    _argument_refs: dict[str, dict[str, Any]]
    _null_refs: dict[str, dict[str, Any]]

    def _load_aliases(self) -> None:
        """name_aliases: what each provider file calls a tool or a property, back to the spec."""
        aliases = {}
        if self.SCHEMAS is not None and _schema_text(self.SCHEMAS, "aliases") is not None:
            aliases = load_schema(self.SCHEMAS, "aliases")
        self._tool_aliases = aliases.get("tools", {})
        self._argument_aliases = aliases.get("arguments", {})
        self._null_maps = aliases.get("nulls", {})
        # the maps of recursive $refs, {target: {tool: {pointer: map}}} (rarely present)
        self._argument_refs = aliases.get("argument_refs", {})
        self._null_refs = aliases.get("null_refs", {})

    def unalias(self, target: str, name: str, arguments: Any) -> tuple[str, Any]:
        """A call as `target`'s file named it, back to the spec's tool and argument names."""
        aliases = self._tool_aliases.get(target)
        if aliases:
            name = aliases.get(name, name)
        maps = self._argument_aliases.get(target)
        nulls = self._null_maps.get(target)
        renamed = maps is not None and name in maps
        absent = nulls is not None and name in nulls
        if renamed or absent:
            if isinstance(arguments, (str, bytes, bytearray)):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError:
                    return name, arguments  # execute explains the bad JSON
            if absent:
                assert nulls is not None
                refs = self._null_refs.get(target, {}).get(name)
                arguments = _absent_nulls(arguments, nulls[name], refs)
            if renamed:
                assert maps is not None
                refs = self._argument_refs.get(target, {}).get(name)
                arguments = _unalias(arguments, maps[name], refs)
        return name, arguments

    def sent_names(self, target: str) -> dict[str, str]:
        """Spec tool name -> the name `target`'s file gives it, where they differ."""
        return {name: alias for alias, name in self._tool_aliases.get(target, {}).items()}

    async def _round_trip(
        self, provider: Provider, payload: Any, ctx: ToolContext | None, policy: Policy
    ) -> Any:
        """Execute every call of one provider response; the provider's reply to send back."""
        raw, calls = self._calls(provider, payload, ctx)
        results = await self._execute_all(calls, policy)
        return self._replies(provider, raw, calls, results)

    def _round_trip_sync(
        self, provider: Provider, payload: Any, ctx: ToolContext | None, policy: Policy
    ) -> Any:
        """`_round_trip` from a thread that is not on an event loop (see _execute_all_sync)."""
        raw, calls = self._calls(provider, payload, ctx)
        results = self._execute_all_sync(calls, policy)
        return self._replies(provider, raw, calls, results)

    def _calls(
        self, provider: Provider, payload: Any, ctx: ToolContext | None
    ) -> tuple[list[RawCall], list[tuple[str, Any, ToolContext]]]:
        """A provider response's calls as sent, and as the toolkit runs them (spec names and
        arguments, each with its context)."""
        raw = provider.calls(payload)
        base = ctx or EMPTY_CONTEXT
        calls = []
        for call in raw:
            name, arguments = self.unalias(provider.NAME, call.name, call.arguments)
            context = replace(
                base,
                provider=provider.NAME,
                tool_name=name,
                call_id=None if call.call_id is None else str(call.call_id),
            )
            calls.append((name, arguments, context))
        return raw, calls

    def _replies(
        self,
        provider: Provider,
        raw: Sequence[RawCall],
        calls: Sequence[tuple[str, Any, ToolContext]],
        results: list[ToolResult],
    ) -> Any:
        for i, (call, result) in enumerate(zip(raw, results, strict=True)):
            name = calls[i][0]
            if result.problems and (
                call.name != name or name in self._argument_aliases.get(provider.NAME, {})
            ):
                # name what the model sent: the tool and argument names of the provider's file
                mapping = self._argument_aliases.get(provider.NAME, {}).get(name, {})
                refs = self._argument_refs.get(provider.NAME, {}).get(name)
                places = tuple(
                    (_sent_place(loc, mapping, refs), msg) for loc, msg in result.problems
                )
                results[i] = replace(result, output=_invalid_text(call.name, places))
        return provider.replies(raw, results)
