"""YAML text as plain data plus the positions of its parts, as strictly as spec files are read:
tags that construct objects, merge keys, non-string keys, duplicate keys and alias bombs are
refused, and dates stay strings. Only toolspec/load.py imports it, when a YAML text is read, so
work on JSON and on the last build's record never imports PyYAML.
"""

from __future__ import annotations

from typing import Any

import yaml

from toolnexus_gen.ir import Positions
from toolnexus_gen.toolspec.pointer import join_pointer

_YAML_PLAIN_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2-like scalars: dates stay strings, so data is plain JSON."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}


# libyaml's parser when PyYAML has it: about ten times faster on an import's thousand specs,
# and its nodes carry the same marks. Text it refuses is read again by PyYAML's own parser,
# whose messages the diagnostics quote.
_CBase: Any = getattr(yaml, "CSafeLoader", None)
if _CBase is not None:

    class _CLoader(_CBase):  # type: ignore[misc]
        yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers


def _fast_node(text: str) -> tuple[yaml.Node | None, Any] | None:
    if _CBase is None:
        return None
    loader = _CLoader(text)
    try:
        return loader.get_single_node(), loader
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()


def parse(
    text: str, fail: Any, scalar_keys: bool, max_depth: int, max_nodes: int
) -> tuple[Any, Positions]:
    """YAML text as plain data and the positions of its parts; `fail(code, message, line, col)`
    makes the exception raised for text it refuses (toolspec/load.py's LoadError)."""
    fast = _fast_node(text)
    if fast is not None:
        node, loader = fast
        if node is None:
            raise fail("TN103", "file is empty; a spec needs at least a description")
        positions = Positions()
        budget = [max_nodes]
        limits = (max_depth, max_nodes)
        value = _yaml_value(node, "", positions, loader, fail, 0, budget, scalar_keys, limits)
        return value, positions
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise fail("TN101", f"invalid YAML: {problem}", line, col) from None
    except yaml.YAMLError as exc:
        raise fail("TN101", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise fail("TN104", f"document is nested too deeply (limit {max_depth} levels)") from None
    finally:
        loader.dispose()
    if node is None:
        raise fail("TN103", "file is empty; a spec needs at least a description")
    positions = Positions()
    limits = (max_depth, max_nodes)
    budget = [max_nodes]
    return _yaml_value(node, "", positions, loader, fail, 0, budget, scalar_keys, limits), positions


def _yaml_value(
    node: yaml.Node,
    pointer: str,
    positions: Positions,
    loader: _Loader,
    fail: Any,
    depth: int,
    budget: list[int],
    scalar_keys: bool,
    limits: tuple[int, int],
) -> Any:
    here = (node.start_mark.line + 1, node.start_mark.column + 1)
    positions.values[pointer] = here
    budget[0] -= 1
    if budget[0] < 0:
        raise fail(
            "TN104", f"document expands to more than {limits[1]} values (YAML aliases?)", *here
        )
    if depth > limits[0]:
        raise fail("TN104", f"document is nested too deeply (limit {limits[0]} levels)", *here)
    if node.tag not in _YAML_PLAIN_TAGS:
        raise fail(
            "TN106", f"YAML tag {node.tag!r} is not allowed: spec files hold plain data only", *here
        )
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key_at = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise fail("TN106", "YAML merge keys (<<) are not allowed in spec files", *key_at)
            if not isinstance(key_node, yaml.ScalarNode) or (
                key_node.tag != "tag:yaml.org,2002:str" and not scalar_keys
            ):
                raise fail("TN105", "mapping keys must be strings (quote the key)", *key_at)
            key = key_node.value
            if key in result:
                raise fail("TN105", f"duplicate key {key!r}", *key_at)
            child = join_pointer(pointer, key)
            positions.keys[child] = key_at
            result[key] = _yaml_value(
                value_node, child, positions, loader, fail, depth + 1, budget, scalar_keys, limits
            )
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _yaml_value(
                item,
                join_pointer(pointer, i),
                positions,
                loader,
                fail,
                depth + 1,
                budget,
                scalar_keys,
                limits,
            )
            for i, item in enumerate(node.value)
        ]
    if node.tag == "tag:yaml.org,2002:timestamp":
        return node.value
    value = loader.construct_object(node, deep=True)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise fail("TN101", f"{node.value!r} is not a JSON number", *here)
    return value
