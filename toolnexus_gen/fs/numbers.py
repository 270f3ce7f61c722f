"""Numbers as JSON can carry them, in every JSON and YAML text the product reads (specs,
fragments, OpenAPI documents, mcp.json, SKILL.md front matter).

Python reads an integer of at most 4,300 digits from text (`sys.get_int_max_str_digits()`, a
guard against quadratic work) and writes one back no longer; a float past the double range
reads as infinity, which JSON cannot hold. Either is a located TN101 here, never a traceback
later, in the loader or when the generated files are written.
"""

from __future__ import annotations

import math
import re
import sys

_LOG10_2 = math.log10(2)


def integer_message(digits: int) -> str:
    return (
        f"an integer of {digits} digits: numbers are read up to {sys.get_int_max_str_digits()} "
        "digits; write it as a string"
    )


def long_integer_value(value: int) -> str | None:
    """Why an integer (read from hexadecimal or octal YAML, which has no such limit) cannot be
    written back as JSON, or None."""
    limit = sys.get_int_max_str_digits()
    digits = int(abs(value).bit_length() * _LOG10_2) + 1
    return integer_message(digits) if limit and digits > limit else None


class NotFinite(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def finite_float(literal: str) -> float:
    """json.loads' parse_float: a number past the double range (`1e999`) is refused, not read as
    infinity (json.dumps would write `Infinity`, which is not JSON)."""
    value = float(literal)
    if math.isinf(value):
        raise NotFinite(literal)
    return value


def json_number_problem(text: str, exc: ValueError) -> tuple[str, int, int] | None:
    """(message, line, col) when json.loads refused a number (NotFinite, or an integer too long
    to read), else None."""
    if isinstance(exc, NotFinite):
        found = re.search(rf"(?<![\w.\"-]){re.escape(exc.literal)}(?![\w.])", text)
        message = (
            f"{exc.literal} is not a JSON number toolnexus-gen can keep: it is past the range of "
            "a double (it would be written as Infinity); write a smaller number or a string"
        )
    elif "integer string conversion" in str(exc):
        limit = sys.get_int_max_str_digits()
        found = re.search(rf"(?<![\w.\"])-?\d{{{limit + 1},}}", text)
        digits = len(found.group().lstrip("-")) if found else limit + 1
        message = integer_message(digits)
    else:
        return None
    offset = found.start() if found else 0
    line_start = text.rfind("\n", 0, offset) + 1
    return message, text.count("\n", 0, offset) + 1, offset - line_start + 1
