"""Tool sources other than hand-written specs, in front of the pipeline, never inside it.

Each source is one module that turns the outside world into spec data: snapshots written into
the spec folder (an MCP server's tools, an OpenAPI document's operations), or specs contributed
in memory (the built-in tools, skills). The pipeline stays offline and knows a tool's origin
only by its spec's `source`/`http` keys, which become the tool's *binding*: the generated
dispatch table names the binding instead of a handler method, and the runtime's executor of
that kind (`toolnexus_runtime.executors`) runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolnexus_gen.config.options import BuildOptions
    from toolnexus_gen.ir import Contribution


def contribute(options: BuildOptions) -> Contribution:
    """What the configured in-memory sources (built-ins, skills) add to a build: the pipeline's
    `contribute` hook (session.py hands this over)."""
    from toolnexus_gen.ir import Contribution
    from toolnexus_gen.sources import builtins, skills

    parts = [builtins.contribute(options), skills.contribute(options)]
    return Contribution(
        tuple(spec for part in parts for spec in part.specs),
        tuple(item for part in parts for item in part.files),
        tuple(d for part in parts for d in part.diagnostics),
    )
