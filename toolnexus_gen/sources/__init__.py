"""Tool sources other than hand-written specs, in front of the pipeline, never inside it.

Each source is one module that turns the outside world into spec data: snapshots written into
the spec folder (an MCP server's tools, an OpenAPI document's operations), or specs contributed
in memory (the built-in tools, skills). The pipeline stays offline and knows a tool's origin
only by its spec's `source`/`http` keys, which become the tool's *binding*: the generated
dispatch table names the binding instead of a handler method, and the runtime's executor of
that kind (`toolnexus_runtime.executors`) runs it.
"""
