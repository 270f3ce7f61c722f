from typing import Any


def strands_tools(toolkit: Any, *, toolset: Any = None) -> Any:
    raise NotImplementedError
