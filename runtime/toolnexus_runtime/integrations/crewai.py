from typing import Any


def crewai_tools(toolkit: Any, *, toolset: Any = None) -> Any:
    raise NotImplementedError
