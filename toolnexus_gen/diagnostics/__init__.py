"""Diagnostics: located messages, collected across every file before the CLI reports them."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


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
        where = f" (at {self.pointer or '/'})" if self.pointer is not None else ""
        return f"{self.path}:{self.line}:{self.col}: {self.severity.value}[{self.code}]: {self.message}{where}"

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
