"""What the import's summary says of the operations as a whole: the warnings of skipped
operations, one per reason and place, the tools that will send no credentials, and those
whose request body is one argument's text or bytes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolnexus_gen.diagnostics import Diagnostic
from toolnexus_gen.sources.openapi.document import Skip


def named_skips(skips: list[tuple[Skip, str]], done: str = "skipped") -> list[Diagnostic]:
    """One warning per reason and place, naming every operation it skipped (a shared request
    body skips each operation that uses it, at the body's one place); `done` says what
    happened to them."""
    grouped: dict[tuple[Any, ...], tuple[Skip, list[str]]] = {}
    for exc, operation in skips:
        key = (exc.code, exc.message, exc.at.key, exc.on_key)
        grouped.setdefault(key, (exc, []))[1].append(operation)
    out = []
    for exc, operations in grouped.values():
        shown = ", ".join(operations[:5])
        if len(operations) > 5:
            shown += f" and {len(operations) - 5} more"
        what = "operation" if len(operations) == 1 else f"{len(operations)} operations"
        diagnostic = exc.diagnostic()
        out.append(replace(diagnostic, message=f"{diagnostic.message} ({what} {done}: {shown})"))
    return out


def no_credentials_note(tools: list[str], declared: bool) -> str:
    shown = ", ".join(tools[:5]) + (f" and {len(tools) - 5} more" if len(tools) > 5 else "")
    why = (
        "no security scheme of the document that the import carries covers them"
        if declared
        else "the document declares no security scheme"
    )
    return (
        f"{len(tools)} tool(s) will send no credentials ({shown}): their parameters carry one "
        f"(Authorization, an API key or token), but {why}; give the Toolkit an http_client "
        "that authenticates, or add a ${VAR} header to their specs"
    )


def raw_bodies_note(tools: list[str]) -> str:
    """`tools`: "name (media type[, base64])" of each tool with a text or binary body."""
    shown = ", ".join(tools[:5]) + (f" and {len(tools) - 5} more" if len(tools) > 5 else "")
    return (
        f"{len(tools)} tool(s) send a raw request body ({shown}): its body argument is the "
        "body's text as written, or (base64) the base64 of its bytes, sent as that media type"
    )
