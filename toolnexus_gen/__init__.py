"""toolnexus-gen: define each LLM tool once; generate provider schemas, typed handlers and dispatch."""

__version__ = "0.2.0"
