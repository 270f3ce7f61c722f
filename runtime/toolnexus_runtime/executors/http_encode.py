"""How an `http` tool's arguments are written into a request: the URL path, the query string,
header values and an urlencoded form body, each after OpenAPI's serialisation styles; the parts
of a multipart body; and a text or binary body, one argument's text or the bytes of its base64.

A binding may name, per argument, the `style` and `explode` its OpenAPI parameter declares
(`styles`), and per property of a form body its `encoding` (the Encoding Object's style and
explode, or `json` for a property sent as JSON text). Without one, a value goes as it always
has: a list as repeated keys, an object (or a list holding one) as JSON text, a scalar as its
text; `null` is left out.

Styles (OpenAPI 3.1, 4.8.12.4), for `name` = [a, b] or {x: 1, y: 2}:
- query and form: `form` (the default) explode true `name=a&name=b`, `x=1&y=2`; explode false
  `name=a,b`, `name=x,1,y,2`; `spaceDelimited` / `pipeDelimited` (explode false) join with
  `%20` / `|`; `deepObject` `name[x]=1&name[y]=2`, nested objects and lists as
  `name[x][0][y]=...` (the bracket form Stripe and Rails read); `json` the value as JSON text;
- path: `simple` `a,b`, `x,1,y,2` (explode: `x=1,y=2`); `label` `.a.b`; `matrix` `;name=a,b`
  (explode: `;name=a;name=b`);
- header: `simple`, as in the path.
Every value and key is percent-encoded; the delimiters a style puts between them are not.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ..datatypes import ToolError

if TYPE_CHECKING:
    from .http_read import Secrets

QUERY_STYLES = frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject", "json"})
PATH_STYLES = frozenset({"simple", "label", "matrix"})
HEADER_STYLES = frozenset({"simple", "json"})


HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token
HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")  # what httpx sends as a header value (ASCII)
# headers the HTTP library owns (framing, routing, the connection): a tool never sets them
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "expect"}
    | {"trailer", "keep-alive"}
)
# a JSON body's media type without parameters (RFC 6838 names): nothing else reaches the header
MEDIA_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
)
# a text or binary body's Content-Type: the media type, then `; name=value` parameters (a token
# or a quoted string); printable ASCII without a line break, so it never adds a header
RAW_MEDIA_TYPE = re.compile(
    MEDIA_TYPE.pattern + r"(?:[ \t]*;[ \t]*[A-Za-z0-9!#$%&'*+.^_`|~-]+="
    r"(?:[A-Za-z0-9!#$%&'*+.^_`|~-]+|\"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e]|\\[\t\x20-\x7e])*\"))*"
)
# what base64 text may hold between its characters: str.split's whitespace (Unicode's too, the
# last of which is U+3000), as a str.translate table that drops it
WHITESPACE: dict[int, None] = dict.fromkeys(c for c in range(0x3001) if chr(c).isspace())
# ${VAR} (the environment) or {name} (an argument)
TOKEN = re.compile(r"\$\{([^{}]*)\}|\{([^{}]*)\}")


class Unsendable(Exception):
    """An argument the request cannot carry: an object inside a pipe-delimited list, a path
    value that is not one segment (an invalid-arguments result; nothing is sent)."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument, self.message = argument, message


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def _q(text: str) -> str:
    return quote(text, safe="")


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _plain(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def query_parts(name: str, value: Any, style: Mapping[str, Any] | None) -> list[str]:
    """`key=value` pieces (percent-encoded) for one query or form-body argument; none for null."""
    if value is None:
        return []
    if style is None:  # the binding says nothing: lists repeat, objects go as JSON
        if isinstance(value, list) and all(_plain(v) for v in value):
            return [f"{_q(name)}={_q(scalar(v))}" for v in value if v is not None]
        if isinstance(value, (dict, list)):
            return [f"{_q(name)}={_q(_compact(value))}"]
        return [f"{_q(name)}={_q(scalar(value))}"]
    kind = style.get("style", "form")
    explode = bool(style.get("explode", kind == "form"))
    if kind == "json":
        text = value if isinstance(value, str) else _compact(value)
        return [f"{_q(name)}={_q(text)}"]
    if kind == "deepObject":
        return [f"{_q(key)}={_q(text)}" for key, text in _deep(name, value)]
    if isinstance(value, dict):
        if explode and kind == "form":
            return [part for key, item in value.items() for part in query_parts(key, item, None)]
        items = [text for key, item in value.items() for text in (key, _flat(name, item))]
        return [f"{_q(name)}={_join(kind, items)}"]
    if isinstance(value, list):
        items = [_flat(name, item) for item in value if item is not None]
        if explode:
            return [f"{_q(name)}={_q(item)}" for item in items]
        return [f"{_q(name)}={_join(kind, items)}"]
    return [f"{_q(name)}={_q(scalar(value))}"]


def _join(kind: str, items: list[str]) -> str:
    delimiter = {"spaceDelimited": "%20", "pipeDelimited": "|"}.get(kind, ",")
    return delimiter.join(_q(item) for item in items)


def _flat(name: str, item: Any) -> str:
    if not _plain(item):
        raise Unsendable(
            name,
            "this parameter's style carries only flat lists and objects (of strings, numbers "
            "and booleans)",
        )
    return scalar(item)


def _deep(key: str, value: Any) -> list[tuple[str, str]]:
    """(key with brackets, text) for every leaf: a[x]=1, a[y][0]=2; null leaves left out."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _deep(f"{key}[{k}]", v)]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in _deep(f"{key}[{i}]", v)]
    if value is None:
        return []
    return [(key, scalar(value))]


def path_value(name: str, value: Any, style: Mapping[str, Any] | None) -> tuple[str, list[str]]:
    """(the percent-encoded text that replaces {name} in the path, the raw values in it: each
    is checked to be one path segment)."""
    kind = style.get("style", "simple") if style else "simple"
    explode = bool(style.get("explode", False)) if style else False
    if kind == "json":
        text = value if isinstance(value, str) else _compact(value)
        return _q(text), [text]
    if isinstance(value, dict):
        pairs = [(str(k), _flat(name, v)) for k, v in value.items() if v is not None]
        raw = [text for pair in pairs for text in pair]
        if explode:
            items = [f"{_q(k)}={_q(v)}" for k, v in pairs]
        else:
            items = [_q(text) for text in raw]
    elif isinstance(value, list):
        raw = [_flat(name, v) for v in value if v is not None]
        items = [_q(text) for text in raw]
    else:
        raw = [scalar(value)]
        items = [_q(raw[0])]
    if kind == "label":
        return "." + ("." if explode else ",").join(items), raw
    if kind == "matrix":
        if explode and isinstance(value, list):
            return "".join(f";{_q(name)}={item}" for item in items), raw
        if explode and isinstance(value, dict):
            return "".join(f";{item}" for item in items), raw
        return f";{_q(name)}=" + ",".join(items), raw
    return ",".join(items), raw


def header_text(name: str, value: Any, style: Mapping[str, Any] | None) -> str:
    """A header value from an argument (simple style: lists and objects comma-joined)."""
    if style is not None and style.get("style") == "json":
        return value if isinstance(value, str) else _compact(value)
    explode = bool(style.get("explode", False)) if style else False
    if isinstance(value, dict):
        pairs = [(str(k), _flat(name, v)) for k, v in value.items() if v is not None]
        if explode:
            return ",".join(f"{k}={v}" for k, v in pairs)
        return ",".join(text for pair in pairs for text in pair)
    if isinstance(value, list):
        return ",".join(_flat(name, v) for v in value if v is not None)
    return scalar(value)


def fill_header(
    tool: str,
    header: str,
    template: str,
    args: dict[str, Any],
    used: set[str],
    secrets: Secrets,
    styles: Mapping[str, Mapping[str, Any]],
) -> str | None:
    """A header's value: `${VAR}` read from the environment now (into `secrets`), `{name}` the
    argument (None when an optional one is absent: no header)."""
    parts, start = [], 0
    for match in TOKEN.finditer(template):
        parts.append(template[start : match.start()])
        start = match.end()
        env, arg = match.groups()
        if env is not None:
            value = os.environ.get(env)
            if value is None:
                raise ToolError(
                    f"Tool '{tool}' cannot run: the environment variable {env} is not set "
                    f"(the {header} header is read from it)"
                )
            secrets.add(value)
            if not HEADER_TEXT.fullmatch(value):
                raise ToolError(
                    f"Tool '{tool}' cannot run: the environment variable {env} holds "
                    f"{unsendable(value, show=False)}, which a header cannot carry (the "
                    f"{header} header is read from it; its value is not shown)"
                )
            parts.append(value)
        else:
            used.add(arg)
            if args.get(arg) is None:
                return None
            text = header_text(arg, args[arg], styles.get(arg))
            if not HEADER_TEXT.fullmatch(text):
                raise Unsendable(
                    arg,
                    f"a header value must be printable ASCII; this one holds "
                    f"{unsendable(text, show=True)}",
                )
            parts.append(text)
    parts.append(template[start:])
    value = "".join(parts).strip(" \t")  # a field value has no whitespace around it
    if not HEADER_TEXT.fullmatch(value):  # a literal part: the build refuses it (TN444)
        raise ToolError(
            f"Tool '{tool}': the {header} header cannot be sent: it holds "
            f"{unsendable(value, show=False)}"
        )
    return value


def json_media_type(media: Any) -> bool:
    """application/json, or a type whose subtype ends in +json (merge-patch+json, ...)."""
    if not isinstance(media, str) or not MEDIA_TYPE.fullmatch(media):
        return False
    kind, _, subtype = media.lower().partition("/")
    return (kind, subtype) == ("application", "json") or subtype.endswith("+json")


def raw_media_type(media: Any) -> bool:
    """A media type a text or binary body can be sent as: one type (no range, no multipart
    type, whose boundary is the runtime's) with parameters a header carries as they are."""
    if not isinstance(media, str) or not RAW_MEDIA_TYPE.fullmatch(media):
        return False
    bare = media.split(";", 1)[0].strip().lower()
    return "*" not in bare and not bare.startswith("multipart/")


def raw_body(name: str, value: Any, body: str) -> bytes:
    """The bytes of a text body (the argument's text as UTF-8) or of a binary body (its base64
    text decoded, standard or URL-safe alphabet, padding optional); anything else is an
    invalid argument."""
    if not isinstance(value, str):
        raise Unsendable(name, f"a {body} body is text, not {type(value).__name__}")
    if body == "text":
        return value.encode("utf-8")
    return _decoded(name, value, "this body's content")


def sendable_header(name: str) -> bool:
    """A header name a tool may set: an HTTP token the HTTP client does not own."""
    lower = name.lower()
    return (
        bool(HEADER_NAME.fullmatch(name))
        and lower not in RESERVED_HEADERS
        and not lower.startswith("proxy-")
    )


def unsendable(text: str, *, show: bool) -> str:
    """What in `text` a header cannot carry, in words (the character itself only if `show`)."""
    bad = next(c for c in text if not HEADER_TEXT.fullmatch(c))
    if bad in "\r\n":
        return "a line break"
    if ord(bad) < 0x20 or ord(bad) == 0x7F:
        return f"a control character (U+{ord(bad):04X})"
    return f"a non-ASCII character ({bad!r})" if show else "a non-ASCII character"


def fill_url(
    template: str, args: dict[str, Any], used: set[str], styles: Mapping[str, Mapping[str, Any]]
) -> str:
    """The URL with each {name} replaced by its argument, percent-encoded so that no value adds
    a segment, a query or a fragment; a path value that would walk the path anyway, behind a
    proxy that decodes and normalises it, is refused."""
    path, mark, query = template.partition("?")

    def fill(part: str, in_path: bool) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(2)
            if name is None:
                return match.group(0)
            used.add(name)
            text, raw = path_value(name, args[name], styles.get(name) if in_path else None)
            if in_path:
                for item in raw:
                    _check_segment(name, item)
            return text

        return TOKEN.sub(value, part)

    return fill(path, True) + mark + fill(query, False)


def _check_segment(name: str, text: str) -> None:
    """A path value is one segment, seen the way a decoding proxy sees it: not empty, `.` or
    `..` (or `..;`, which Tomcat reads as `..`), no `/`, `\\` or control character."""
    forms, form = [text], text
    for _ in range(2):  # once and twice decoded: proxies and frameworks decode again
        form = unquote(form)
        if form == forms[-1]:
            break
        forms.append(form)
    for form in forms:
        if form.split(";", 1)[0] in ("", ".", ".."):
            what = "empty" if not text else repr(form.split(";", 1)[0])
            raise Unsendable(
                name,
                f"a path value cannot be {what}: it would change the path the request goes to",
            )
        if "/" in form or "\\" in form or any(ord(c) < 0x20 or ord(c) == 0x7F for c in form):
            raise Unsendable(
                name,
                "a path value cannot hold '/', '\\' or a control character (in any encoding): "
                "it is one segment of the path",
            )


# -- multipart/form-data ------------------------------------------------------------------------

# a part: (field name, (file name or None, content, content type or None)), as httpx's files=
Part = tuple[str, tuple[str | None, bytes, str | None]]


def multipart_parts(name: str, value: Any, rule: Mapping[str, Any] | None) -> list[Part]:
    """The parts of one field of a multipart/form-data body (OpenAPI's defaults): a scalar is a
    text part, a list of scalars one text part per item, an object (or a list holding one) an
    application/json part; a field the binding's `parts` marks `file` is a file part (one per
    item of a list) named after the field, its content the text given (base64-decoded when
    `base64`), sent as its `content_type` (default application/octet-stream); null is left
    out. Nothing is read from disk: the content is the argument itself."""
    if value is None:
        return []
    rule = rule or {}
    media = rule.get("content_type")
    media = media if isinstance(media, str) and MEDIA_TYPE.fullmatch(media) else None
    if rule.get("file"):
        items = value if isinstance(value, list) else [value]
        return [
            (
                name,
                (
                    name,
                    _file_content(name, item, bool(rule.get("base64"))),
                    media or "application/octet-stream",
                ),
            )
            for item in items
            if item is not None
        ]
    if json_media_type(media) or (media is None and not _plain_list_or_scalar(value)):
        text = value if isinstance(value, str) and media else _compact(value)
        return [(name, (None, text.encode("utf-8"), media or "application/json"))]
    items = value if isinstance(value, list) else [value]
    return [
        (name, (None, (_compact(v) if not _plain(v) else scalar(v)).encode("utf-8"), media))
        for v in items
        if v is not None
    ]


def _plain_list_or_scalar(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return _plain(value)


def _file_content(name: str, item: Any, encoded: bool) -> bytes:
    text = item if isinstance(item, str) else _compact(item)
    if not encoded:
        return text.encode("utf-8")
    return _decoded(name, text, "this file's content")


def _decoded(name: str, text: str, what: str) -> bytes:
    """The bytes of base64 text (standard or URL-safe alphabet, whitespace and padding
    optional); other text is an invalid argument."""
    compact = text.translate(WHITESPACE)  # one copy: split() would make a string per line
    try:
        return base64.b64decode(
            compact + "=" * (-len(compact) % 4), altchars=_altchars(compact), validate=True
        )
    except (binascii.Error, ValueError):
        raise Unsendable(name, f"{what} must be base64 text") from None


def _altchars(text: str) -> bytes | None:
    """The URL-safe alphabet (- and _) when the text uses it."""
    return b"-_" if ("-" in text or "_" in text) else None
