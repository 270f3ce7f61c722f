"""The one place where user text becomes Python source: string literals and docstrings.

Every user string reaching a generated `.py` goes through here, so descriptions holding quotes,
backslashes, NUL, template syntax or code cannot break out of their literal, and the result is
already in the form `ruff format` would give it.
"""

from __future__ import annotations

import textwrap


def _escape_char(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    if ch.isprintable() or ch == "\n":
        return ch
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _plain(text: str) -> bool:
    """Whether _escape_char leaves every character of text as it is."""
    return text.isprintable() and "\\" not in text


def py_str(text: str) -> str:
    """A Python string literal for text, using the quotes ruff would choose."""
    quote = "'" if text.count('"') > text.count("'") else '"'
    if _plain(text):  # the common case: nothing to escape
        body = text
    else:
        body = "".join("\\n" if ch == "\n" else _escape_char(ch) for ch in text)
    return quote + body.replace(quote, "\\" + quote) + quote


def docstring(text: str, indent: int) -> str:
    """A triple-quoted docstring for text, indented for a body at `indent` spaces.

    Docstrings are documentation, not data: leading and trailing whitespace and common
    indentation are normalised the way formatters do; everything else is kept exactly.
    """
    body = text if _plain(text.replace("\n", "")) else "".join(_escape_char(ch) for ch in text)
    if '"' in body and ('""' in body or body.rstrip().endswith('"')):
        body = body.replace('"', '\\"')
    first, _, rest = body.strip().partition("\n")
    lines = [first.rstrip()] + textwrap.dedent(rest).split("\n") if rest else [first.rstrip()]
    pad = " " * indent
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    out = [f'"""{lines[0]}'] + [
        f"{pad}{line.rstrip()}" if line.strip() else "" for line in lines[1:]
    ]
    return "\n".join(out) + f'\n{pad}"""'


def py_literal(value: object) -> str:
    """A Python literal for JSON data (dicts, lists, strings, numbers, booleans, null), on one
    line, strings through py_str."""
    if isinstance(value, str):
        return py_str(value)
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{py_str(str(k))}: {py_literal(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"not JSON data: {type(value).__name__}")


def py_literal_lines(value: object, indent: int, prefix: str, suffix: str, width: int = 88) -> str:
    """`prefix + literal + suffix` at `indent`, split over lines as `ruff format` splits it
    (its default width): on one line when it fits; else each element of a dict or list on its own
    line with a trailing comma, or, for a single element, that element split in turn."""
    return "\n".join(_lines(value, " " * indent, prefix, suffix, width))


def _lines(value: object, pad: str, prefix: str, suffix: str, width: int) -> list[str]:
    one = f"{pad}{prefix}{py_literal(value)}{suffix}"
    if len(one) <= width or not isinstance(value, (dict, list)) or not value:
        return [one]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    items = (
        [(f"{py_str(str(k))}: ", v) for k, v in value.items()]
        if isinstance(value, dict)
        else [("", v) for v in value]
    )
    inner = pad + "    "
    if len(items) == 1:  # no comma to split at: the element itself is split
        body = _lines(items[0][1], inner, items[0][0], "", width)
    else:
        body = [line for key, item in items for line in _lines(item, inner, key, ",", width)]
    return [f"{pad}{prefix}{opening}", *body, f"{pad}{closing}{suffix}"]
