from typing import Any


def autogen_tools(toolkit: Any, *, toolset: Any = None) -> Any:
    raise NotImplementedError
