"""HTML pages to text or markdown, for webfetch: run as a child process that is killed at its
time limit.

Converting a hostile page in the calling process is not safe: the standard library's HTML
parser (which BeautifulSoup, and so markdownify, use too) takes quadratic time on some
malformed input before Python 3.11.13 / 3.12.11 / 3.13.4 (400 KB of `<a<a<a...` takes minutes
there), markdownify recurses once per nested element, and a thread cannot be stopped. So
`web.py` runs this file as a script (`python -I pages.py`, stdlib only until markdownify is
imported) with a time limit and kills it when the limit passes; CPU time and memory are also
capped inside it (`resource`), and markdown that takes more than half the time limit is given
up for text. Where no child process can be started (a frozen application, a
loop without subprocess support) the same `convert` runs in a thread instead.

Protocol: one JSON object on stdin, `{"html", "format", "path"}` (`path`: the parent's
sys.path, so markdownify is found where the parent finds it); one JSON object on stdout,
`{"text"}` or `{"error"}`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from typing import Any

MARKDOWN_MAX_CHARS = 1_000_000  # larger pages (scripts and styles left out) come back as text
MEMORY_BYTES = 2 << 30  # the child's address space, at most
_SCRIPT = re.compile(r"<(script|style)\b", re.IGNORECASE)


def convert(html: str, fmt: str, markdown_seconds: float = 0) -> str:
    """`html` as markdown (markdownify) or text; a note first when markdown could not be made
    (a page too large, nested too deeply, or, given `markdown_seconds` in the child, too slow
    to convert: then it comes back as text)."""
    html = without_scripts(html)
    if fmt != "markdown":
        return plain(html)
    from markdownify import markdownify

    if len(html) > MARKDOWN_MAX_CHARS:
        note = (
            f"[shown as text: the page has {len(html)} characters of HTML, more than the "
            f"{MARKDOWN_MAX_CHARS} converted to markdown]"
        )
        return f"{note}\n\n{plain(html)}"
    try:
        with _alarm(markdown_seconds):
            return str(markdownify(html, heading_style="ATX")).strip() + "\n"
    except RecursionError:
        note = "[shown as text: the page nests its elements too deeply for markdown]"
    except _TooSlow:
        note = f"[shown as text: converting it to markdown took longer than {markdown_seconds:g} s]"
    return f"{note}\n\n{plain(html)}"


class _TooSlow(BaseException):
    """Not an Exception: a library's `except Exception` does not swallow it."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """_TooSlow raised after `seconds` (in the main thread; nothing when 0), and again every
    50 ms until it is out: raised where Python cannot pass it on (a weakref callback, a
    __del__), it is dropped, and the next one is not."""
    if not seconds:
        yield
        return
    import signal

    def ring(signum: int, frame: Any) -> None:
        raise _TooSlow

    hook = sys.unraisablehook

    def dropped(unraisable: Any) -> None:
        # a ring that lands where Python cannot pass it on is dropped quietly: reporting it
        # (formatting its traceback) could itself be cut short by the next ring
        if not isinstance(unraisable.exc_value, _TooSlow):
            hook(unraisable)

    previous = signal.signal(signal.SIGALRM, ring)
    sys.unraisablehook = dropped
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.05)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook


def without_scripts(html: str) -> str:
    """`html` without the contents of its script and style elements, in one pass (each search
    starts where the last one ended)."""
    parts: list[str] = []
    at = 0
    while found := _SCRIPT.search(html, at):
        parts.append(html[at : found.start()])
        close = re.compile(rf"</{found.group(1)}\s*>", re.IGNORECASE).search(html, found.end())
        if close is None:
            return "".join(parts)
        at = close.end()
    parts.append(html[at:])
    return "".join(parts)


class _Text(HTMLParser):
    """The text of an HTML page, paragraphs on their own lines; scripts and styles left out."""

    SKIP = frozenset({"script", "style", "noscript", "template", "head"})
    BLOCK = frozenset(
        {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"}
        | {"header", "footer", "blockquote", "pre", "table", "ul", "ol", "title", "hr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def plain(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line) + "\n"


def _child(seconds: int, markdown_seconds: float) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass  # the parent's kill at the time limit still holds
    request = json.loads(sys.stdin.buffer.read())
    sys.path[:] = [p for p in request["path"] if isinstance(p, str)]
    try:
        reply = {"text": convert(request["html"], request["format"], markdown_seconds)}
    except MemoryError:
        reply = {"error": "converting the page needed more memory than allowed"}
    except Exception as exc:  # noqa: BLE001 (said to the parent, which makes it a ToolError)
        reply = {"error": f"converting the page failed: {type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    _child(int(sys.argv[1]), float(sys.argv[2]))
