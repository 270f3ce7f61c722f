"""YAML text as plain data plus the positions of its parts, as strictly as spec files are read:
tags that construct objects, merge keys, non-string keys, duplicate keys and alias bombs are
refused, and dates stay strings; an integer too long to read or to write back as JSON is a
located error, as in JSON. Only toolspec/load.py imports it, when a YAML text is read, so
work on JSON and on the last build's record never imports PyYAML.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from toolnexus_gen.fs.numbers import integer_message, long_integer_value
from toolnexus_gen.ir import Positions
from toolnexus_gen.toolspec.pointer import join_pointer

MAX_EXPANSION = 200_000  # values YAML aliases may add to any document the product reads

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


def parse(text: str, fail: Any, scalar_keys: bool, max_depth: int) -> tuple[Any, Positions]:
    """YAML text as plain data and the positions of its parts; `fail(code, message, line, col)`
    makes the exception raised for text it refuses (toolspec/load.py's LoadError)."""
    fast = _fast_node(text)
    if fast is not None:
        node, loader = fast
    else:
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
            raise fail(
                "TN104", f"document is nested too deeply (limit {max_depth} levels)"
            ) from None
        finally:
            loader.dispose()
    if node is None:
        raise fail("TN103", "file is empty; a spec needs at least a description")
    reader = _Reader(loader, fail, scalar_keys, max_depth)
    return reader.value(node, "", 0), reader.positions


class _Reader:
    """One document's nodes as plain data. A node an alias repeats is read again at each use
    (the data is a tree, as JSON's is), and every value read again counts against one limit,
    MAX_EXPANSION, whatever the document: an alias bomb of a few hundred bytes stops there, in
    well under a second, while a document without aliases may be of any size."""

    def __init__(self, loader: Any, fail: Any, scalar_keys: bool, max_depth: int) -> None:
        self.loader, self.fail, self.scalar_keys, self.max_depth = (
            loader,
            fail,
            scalar_keys,
            max_depth,
        )
        self.positions = Positions()
        self.seen: set[int] = set()
        self.expanded = 0

    def value(self, node: yaml.Node, pointer: str, depth: int) -> Any:
        fail = self.fail
        here = (node.start_mark.line + 1, node.start_mark.column + 1)
        self.positions.values[pointer] = here
        if id(node) in self.seen:
            self.expanded += 1
            if self.expanded > MAX_EXPANSION:
                raise fail(
                    "TN104",
                    f"YAML aliases expand the document by more than {MAX_EXPANSION} values "
                    "(an alias bomb?)",
                    *here,
                )
        else:
            self.seen.add(id(node))
        if depth > self.max_depth:
            raise fail(
                "TN104", f"document is nested too deeply (limit {self.max_depth} levels)", *here
            )
        if node.tag not in _YAML_PLAIN_TAGS:
            raise fail(
                "TN106",
                f"YAML tag {node.tag!r} is not allowed: spec files hold plain data only",
                *here,
            )
        if isinstance(node, yaml.MappingNode):
            result: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key_at = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise fail(
                        "TN106", "YAML merge keys (<<) are not allowed in spec files", *key_at
                    )
                if not isinstance(key_node, yaml.ScalarNode) or (
                    key_node.tag != "tag:yaml.org,2002:str" and not self.scalar_keys
                ):
                    raise fail("TN105", "mapping keys must be strings (quote the key)", *key_at)
                key = key_node.value
                if key in result:
                    raise fail("TN105", f"duplicate key {key!r}", *key_at)
                child = join_pointer(pointer, key)
                self.positions.keys[child] = key_at
                result[key] = self.value(value_node, child, depth + 1)
            return result
        if isinstance(node, yaml.SequenceNode):
            return [
                self.value(item, join_pointer(pointer, i), depth + 1)
                for i, item in enumerate(node.value)
            ]
        if node.tag == "tag:yaml.org,2002:timestamp":
            return node.value
        if node.tag == "tag:yaml.org,2002:int" and (problem := _long_integer(node.value)):
            raise fail("TN101", problem, *here)
        value = self.loader.construct_object(node, deep=True)
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise fail("TN101", f"{node.value!r} is not a JSON number", *here)
        if isinstance(value, int) and (problem := long_integer_value(value)):
            raise fail("TN101", problem, *here)  # hexadecimal, octal: no text limit on reading
        return value


def _long_integer(text: str) -> str | None:
    digits = sum(char.isdigit() for char in text)
    limit = sys.get_int_max_str_digits()
    if limit and digits > limit:
        return integer_message(digits)
    return None
