"""Every name that reaches Python is made here: identifiers, keywords, builtins, collisions."""

from __future__ import annotations

import builtins
import keyword
import re

from toolnexus_gen.ir import PyNames

_NON_IDENT = re.compile(r"[^0-9A-Za-z_]+")
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))


def method_name(tool_name: str) -> str:
    ident = _NON_IDENT.sub("_", tool_name)
    if ident[:1].isdigit() or ident.startswith("_"):
        ident = f"tool_{ident}"
    if ident in _RESERVED:
        ident += "_"
    return ident


def pascal_case(tool_name: str) -> str:
    words = [w for w in re.split(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])", tool_name) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Tool"
    if name[0].isdigit():
        name = f"Tool{name}"
    return name


def python_names(tool_name: str) -> PyNames:
    method = method_name(tool_name)
    module = method.lower()  # case-insensitive file systems: modules differ by more than case
    if keyword.iskeyword(module):  # `AS` is a fine method name, but `from .as import` is not
        module += "_"
    return PyNames(method=method, model=f"{pascal_case(tool_name)}Args", module=module)
