"""Diagnostics: located messages, collected across every file before the CLI reports them."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field


def printable(text: str, *, lines: bool = False) -> str:
    """`text` safe for a terminal: every character that is not printable (control characters
    such as ESC, newlines, bidi overrides, unassigned code points) written as its escape
    (`\\x1b`, `\\n`, `\\u202e`); with `lines`, line breaks and tabs are kept (text that is
    meant to span lines: a diff, a multi-line message). Messages quote what specs, documents and
    MCP servers sent, and that text must not move the cursor, retitle the window, set the
    clipboard or forge a line."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() or (lines and char in "\n\t") else repr(char)[1:-1]
        for char in text
    )


_LOGIN = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s]*@")


def masked_url(text: str) -> str:
    """`text` with the user name and password of each URL in it written `***`
    (`https://***@host/`): a message that quotes a URL never repeats a credential."""
    return _LOGIN.sub(r"\1***@", text)


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class ExitCode(enum.IntEnum):
    OK = 0
    STALE = 1
    INVALID = 2


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int
    col: int
    code: str
    message: str
    severity: Severity = Severity.ERROR
    pointer: str | None = None
    target: str | None = None
    # a schema rule's finding: (bundled pointer of the node, keyword), for the describe transform
    at: tuple[str, str | None] | None = field(default=None, compare=False, repr=False)

    def format(self) -> str:
        where = f" (at {printable(self.pointer or '/')})" if self.pointer is not None else ""
        return (
            f"{self.path}:{self.line}:{self.col}: {self.severity.value}[{self.code}]: "
            f"{printable(self.message)}{where}"
        )

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class DiagnosticsError(Exception):
    """Raised by a stage that cannot go on; carries every diagnostic found so far."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("\n".join(d.format() for d in diagnostics))
        self.diagnostics = sorted(diagnostics)


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)
