from typing import Any


def llama_index_tools(toolkit: Any, *, toolset: Any = None) -> Any:
    raise NotImplementedError
