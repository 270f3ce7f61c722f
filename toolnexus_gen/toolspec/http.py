"""Stage 2a, for a tool that is a REST call: its spec's `http` key checked and made the tool's
binding (`{"http": {...}}`, run by toolnexus_runtime.executors.http).

Whatever the spec itself shows to be wrong fails here, at its line and column, rather than at
run time: an unknown method, a URL that is neither absolute http(s) nor relative to a base_url,
a `{placeholder}` that is not a required string or integer argument, a `query` or `body_arg`
that names no argument, a literal credential in a header (secrets go in `${VAR}`, read from the
environment at run time, so they never reach a generated file), a header the HTTP client owns
(Host, Content-Length, Transfer-Encoding, ...: framing a tool could use to smuggle requests) or
whose name or text HTTP cannot carry, a body on a GET, a body's content_type a header could not
carry as it is (a line break: another header), and a text or binary body that is not one string
argument's.

A `${VAR}` may name any variable: the spec is the project's own file (`import openapi` makes the
names itself, never from the document).

The binding is written normalised: the method in capitals, the body mode explicit, and a
relative URL together with the base_url it is appended to (the runtime's `base_url=` may
replace that at run time).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from toolnexus_gen.diagnostics import masked_url

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
QUERY_METHODS = ("GET", "HEAD", "DELETE", "OPTIONS")  # arguments go to the query string
NO_BODY = ("GET", "HEAD")  # a body here is dropped or refused by servers and proxies
# bodies that are one argument as it is: its UTF-8 text, or the bytes of its base64 text
RAW_BODIES = ("text", "binary")
# ${VAR} (the environment, at run time) or {name} (an argument)
TOKEN = re.compile(r"\$\{([^{}]*)\}|\{([^{}]*)\}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# header names whose value is a credential: a literal value there is a secret in the spec
SECRET_HEADER = re.compile(
    r"(?i)^(authorization|proxy-authorization|cookie)$"
    r"|api[-_]?key|token|secret|passw|auth|key$|signature|session|credential"
)
HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token
HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")  # what a header value carries (httpx: ASCII)
# headers the HTTP client owns: framing, routing, the connection (request smuggling if a tool
# or its model could set them); Proxy-* belongs to the client's proxy settings
RESERVED_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "expect"}
    | {"trailer", "keep-alive"}
)


def header_problem(name: str) -> str | None:
    """Why a tool cannot set the header `name`, or None when it can."""
    if not HEADER_NAME.fullmatch(name):
        return "is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
    lower = name.lower()
    if lower in RESERVED_HEADERS or lower.startswith("proxy-"):
        return (
            "is set by the HTTP client itself (framing, routing or the proxy connection); a "
            "tool that set it could smuggle requests"
        )
    return None


# a JSON body's media type, without parameters (RFC 6838 names: nothing a header could not
# carry, no `;`, no line break): application/json or any `+json` type
MEDIA_TYPE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
)


# a text or binary body's Content-Type: a media type, then `; name=value` parameters (a token
# or a quoted string): printable ASCII without a line break, so it cannot add a header
PARAMETER = re.compile(
    r"[ \t]*;[ \t]*([A-Za-z0-9!#$%&'*+.^_`|~-]+)="
    r"([A-Za-z0-9!#$%&'*+.^_`|~-]+|\"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e]|\\[\t\x20-\x7e])*\")"
)
PARAMETERS = re.compile(f"(?:{PARAMETER.pattern})*")
# application/ subtypes whose bodies are text (besides text/*, +xml, +yaml and +jwt types)
TEXT_APPLICATION = frozenset(
    {"xml", "jwt", "jose", "yaml", "x-yaml", "ndjson", "x-ndjson", "jsonl", "x-jsonlines"}
    | {"javascript", "x-javascript", "ecmascript", "sql", "graphql", "csv", "text", "x-sh"}
)


def essence(media: str) -> str:
    """A media type without its parameters, in lower case (media types are case-insensitive)."""
    return media.split(";", 1)[0].strip().lower()


def text_media_type(media: str) -> bool:
    """Whether a body of `media` is text (sent as the argument's UTF-8 text, `body: text`):
    text/*, application/xml, application/jwt, application/x-yaml and the other names of
    TEXT_APPLICATION, and every type whose subtype ends in +xml, +yaml or +jwt."""
    kind, _, subtype = essence(media).partition("/")
    return (
        kind == "text"
        or (kind == "application" and subtype in TEXT_APPLICATION)
        or subtype.endswith(("+xml", "+yaml", "+jwt"))
    )


def raw_media_type_problem(media: str, body: str) -> str | None:
    """Why `media` cannot be the Content-Type of a `body` (text or binary) body, or None. What
    passes is what the runtime sends (its http_encode.raw_media_type): no space or `;` after
    the last parameter."""
    bare = media.partition(";")[0].rstrip(" \t")
    if re.fullmatch(r"[\w.+-]+/\*|\*/\*", bare):
        return "is a media range, not the one type a request declares"
    if not re.fullmatch(MEDIA_TYPE.pattern + PARAMETERS.pattern, media):
        return (
            "is not a media type: type/subtype, then `; name=value` parameters if any, printable "
            "ASCII without a line break"
        )
    if bare.lower().startswith("multipart/"):
        return "is a multipart type: its parts and boundary are written by body: multipart"
    named = charset(media)
    if body == "text" and named is not None and named.lower() not in ("utf-8", "utf8"):
        return (
            f"declares the charset {named!r}; a text body is sent as UTF-8 "
            "(write charset=utf-8, or leave the charset out)"
        )
    return None


def charset(media: str) -> str | None:
    """The charset a media type's parameters name: the first that is not UTF-8 when they name
    several (a server may read any one of them), read as a header parser reads them (a quoted
    value's `; charset=` is text); `charset*` (RFC 2231's extended form) counts as a charset.
    Parameters after one that is malformed are not read: such a media type is refused."""
    named: list[str] = []
    rest, position = media[len(media.partition(";")[0]) :], 0
    while found := PARAMETER.match(rest, position):
        name, value = found.group(1), found.group(2)
        position = found.end()
        if name.lower() == "charset" or name.lower().startswith("charset*"):
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            named.append(value if name.lower() == "charset" else f"{name}={value}")
    others = [n for n in named if n.lower() not in ("utf-8", "utf8")]
    return next(iter(others or named), None)


def json_media_type(media: str) -> bool:
    """Whether `media` is a media type a JSON body can be sent as: application/json, or one
    whose subtype ends in +json (merge-patch+json, json-patch+json, vnd.api+json, ...)."""
    if not MEDIA_TYPE.fullmatch(media):
        return False
    kind, _, subtype = media.lower().partition("/")
    return (kind, subtype) == ("application", "json") or subtype.endswith("+json")


SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# what TN441 says of a relative URL without a base_url: the build says it once for all specs
NO_BASE_URL = "is relative, and there is no base_url to append it to"
# the serialisation styles the runtime writes (toolnexus_runtime/executors/http_encode.py)
QUERY_STYLES = frozenset({"form", "spaceDelimited", "pipeDelimited", "deepObject", "json"})
PATH_STYLES = frozenset({"simple", "label", "matrix", "json"})
HEADER_STYLES = frozenset({"simple", "json"})

Add = Callable[[str, str, str], None]  # (code, message, pointer)


def placeholders(text: str) -> list[tuple[str, str]]:
    """("env", VAR) and ("arg", name) for each ${VAR} and {name} in text, in order."""
    return [
        ("env", m.group(1)) if m.group(1) is not None else ("arg", m.group(2))
        for m in TOKEN.finditer(text)
    ]


def http_binding(
    http: dict[str, Any],
    input_schema: Any,
    resolver: Any,
    base_url: str | None,
    add: Add,
) -> dict[str, Any] | None:
    """The normalised binding of a spec's `http` key, or None after reporting its problems
    (`resolver`: a referencing resolver for the spec's input schema; `base_url`: the
    configured one)."""
    found: list[str] = []

    def problem(code: str, message: str, pointer: str) -> None:
        found.append(code)
        add(code, message, pointer)

    arguments = _Arguments(input_schema, resolver)
    method = str(http.get("method", "GET")).upper()
    if method not in METHODS:
        problem(
            "TN440",
            f"http.method {http.get('method')!r} is not an HTTP method this runtime sends "
            f"(use one of {', '.join(METHODS)})",
            "/http/method",
        )
    body = http.get("body", "none" if method in QUERY_METHODS else "json")
    if method in NO_BODY and body != "none":
        problem(
            "TN440",
            f"a {method} request has no body: its arguments go to the query string "
            "(remove body, or use POST)",
            "/http/body",
        )
    url = http["url"]
    own_base = http.get("base_url")
    if own_base is not None and not _absolute_base(own_base):
        problem(
            "TN441",
            f"http.base_url {masked_url(repr(own_base))} must be an absolute http(s) URL "
            "without placeholders, "
            "user:password, query or fragment (credentials go in a header: 'Authorization: Basic "
            "${VAR}')",
            "/http/base_url",
        )
    chosen_base = own_base if own_base is not None else base_url
    _check_url(url, chosen_base, problem)
    used: dict[str, str] = {}  # argument -> where it goes
    for kind, name in placeholders(url):
        if kind == "arg":
            arguments.check_placeholder(name, "/http/url", problem, required=True)
            used[name] = "the URL"
    headers = http.get("headers", {})
    for header, value in headers.items():
        pointer = f"/http/headers/{_escape(header)}"
        why = header_problem(header)
        if why is not None:
            problem("TN444", f"header {header!r} {why}", pointer)
            continue
        literal = TOKEN.sub("", value)
        if not HEADER_TEXT.fullmatch(literal):
            bad = next(c for c in literal if not HEADER_TEXT.fullmatch(c))
            problem(
                "TN444",
                f"header {header!r}: its text holds {bad!r}, which a header cannot carry "
                "(printable ASCII only)",
                pointer,
            )
        tokens = placeholders(value)
        for kind, name in tokens:
            if kind == "env" and not ENV_NAME.fullmatch(name):
                problem(
                    "TN441",
                    f"header {header!r}: ${{{name}}} is not an environment variable name "
                    "(letters, digits and _, not starting with a digit)",
                    pointer,
                )
            elif kind == "arg":
                arguments.check_placeholder(name, pointer, problem, required=False)
                used.setdefault(name, f"header {header!r}")
        if not tokens and SECRET_HEADER.search(header):
            problem(
                "TN443",
                f"header {header!r} holds a literal value: a credential in a spec ends up in the "
                f"generated package; write it as ${{VAR}} (read from the environment at run "
                "time), e.g. 'Bearer ${API_TOKEN}'",
                pointer,
            )
    query = http.get("query", [])
    for index, name in enumerate(query):
        arguments.check_named(name, f"/http/query/{index}", "query", problem)
        if name in used:
            problem(
                "TN442",
                f"query lists {name!r}, which {used[name]} already uses",
                f"/http/query/{index}",
            )
    body_arg = http.get("body_arg")
    if body_arg is not None:
        arguments.check_named(body_arg, "/http/body_arg", "body_arg", problem)
        if body == "none":
            problem(
                "TN442",
                "body_arg needs a body: set body to json, form, multipart, text or binary",
                "/http/body_arg",
            )
        elif body_arg in used or body_arg in query:
            where = used.get(body_arg, "query")
            problem("TN442", f"body_arg {body_arg!r} is already used by {where}", "/http/body_arg")
        elif body in RAW_BODIES and body_arg in arguments.properties:
            arguments.check_text(body_arg, body, problem)
    elif body in RAW_BODIES:
        problem(
            "TN442",
            f"a {body} body is one argument's "
            f"{'text' if body == 'text' else 'base64 text, decoded'}: name it in body_arg",
            "/http/body",
        )
    _check_styles(http, arguments, used, body, problem)
    _check_content_type(http, body, problem)
    if found:
        return None
    binding: dict[str, Any] = {"method": method, "url": url}
    if not SCHEME.match(url):
        binding["base_url"] = chosen_base
    for key in ("headers", "query"):
        if http.get(key):
            binding[key] = http[key]
    binding["body"] = body
    keys = ("body_arg", "content_type", "timeout", "result", "styles", "encoding", "parts")
    for key in (*keys, "names"):
        if key in http:
            binding[key] = http[key]
    return binding


def _check_styles(
    http: dict[str, Any], arguments: _Arguments, used: dict[str, str], body: str, problem: Add
) -> None:
    """Each style names an argument and suits where that argument goes (a URL path segment,
    a header, the query string or a form body); `encoding` belongs to a form body."""
    for name, style in http.get("styles", {}).items():
        pointer = f"/http/styles/{_escape(name)}"
        arguments.check_named(name, pointer, "styles", problem)
        where = used.get(name, "the query")
        allowed = (
            PATH_STYLES
            if where == "the URL"
            else HEADER_STYLES
            if where.startswith("header")
            else QUERY_STYLES
        )
        if style.get("style") not in allowed:
            problem(
                "TN442",
                f"styles: {name!r} goes to {where}, where the style is one of "
                f"{', '.join(sorted(allowed))}, not {style.get('style')!r}",
                f"{pointer}/style",
            )
    for name in http.get("names", {}):
        arguments.check_named(name, f"/http/names/{_escape(name)}", "names", problem)
    if http.get("encoding") and body != "form":
        problem("TN442", "encoding describes a form body: set body to form", "/http/encoding")
    if http.get("parts") and body != "multipart":
        problem("TN442", "parts describes a multipart body: set body to multipart", "/http/parts")
    for name, part in http.get("parts", {}).items():
        media = part.get("content_type")
        if media is not None and not MEDIA_TYPE.fullmatch(media):
            problem(
                "TN445",
                f"parts: {name!r}: content_type {media!r} is not a media type (type/subtype, "
                "without parameters)",
                f"/http/parts/{_escape(name)}/content_type",
            )
    for name, style in http.get("encoding", {}).items():
        if style.get("style") not in QUERY_STYLES:
            problem(
                "TN442",
                f"encoding: {name!r} is a form field, whose style is one of "
                f"{', '.join(sorted(QUERY_STYLES))}, not {style.get('style')!r}",
                f"/http/encoding/{_escape(name)}/style",
            )


def _check_content_type(http: dict[str, Any], body: str, problem: Add) -> None:
    """content_type names the media type of a JSON, text or binary body: one a header carries
    as it is. A text or binary body's Content-Type is content_type alone: no header sets it."""
    if body in RAW_BODIES:
        for header in http.get("headers", {}):
            if header.lower() == "content-type":
                problem(
                    "TN445",
                    f"a {body} body is sent as content_type: a Content-Type header would say "
                    "otherwise (remove the header, and name the media type in content_type)",
                    f"/http/headers/{_escape(header)}",
                )
    if "content_type" not in http:
        return
    media = http["content_type"]
    if body in RAW_BODIES:
        why = raw_media_type_problem(media, body)
        if why is not None:
            problem("TN445", f"content_type {media!r} {why}", "/http/content_type")
    elif body != "json":
        problem(
            "TN445",
            f"content_type is the media type of a json, text or binary body; this tool's body "
            f"is {body} (set body to one of those, or remove content_type)",
            "/http/content_type",
        )
    elif not json_media_type(media):
        problem(
            "TN445",
            f"content_type {media!r} is not a JSON media type: application/json or a type/subtype "
            "ending in +json (application/merge-patch+json), without parameters",
            "/http/content_type",
        )


def _check_url(url: str, base_url: str | None, problem: Add) -> None:
    if "${" in url:
        problem(
            "TN441",
            "${VAR} is not read in a URL: a URL is logged by HTTP clients and proxies; send "
            "credentials in a header ('headers: {Authorization: Bearer ${TOKEN}}')",
            "/http/url",
        )
        return
    if "#" in url:
        problem(
            "TN441",
            f"http.url {masked_url(repr(url))} has a fragment, which is never sent",
            "/http/url",
        )
        return
    if SCHEME.match(url):
        scheme, _, rest = url.partition(":")
        authority = rest[2:].split("/", 1)[0].split("?", 1)[0] if rest.startswith("//") else ""
        if scheme.lower() not in ("http", "https") or not authority:
            problem(
                "TN441",
                f"http.url {masked_url(repr(url))} must be an absolute http(s) URL or a path",
                "/http/url",
            )
        elif "@" in authority:
            problem(
                "TN441",
                "http.url holds a user name or password: it would be copied into the generated "
                "package; send credentials in a header ('Authorization: Basic ${VAR}')",
                "/http/url",
            )
        elif "{" in authority or "{" in scheme:
            problem(
                "TN441",
                f"http.url {masked_url(repr(url))}: placeholders may fill the path and query, never the host "
                "(an argument must not choose where a request goes)",
                "/http/url",
            )
        return
    if base_url is None:
        problem(
            "TN441",
            f"http.url {masked_url(repr(url))} {NO_BASE_URL}: set "
            'base_url = "https://..." under [tool.toolnexus-gen] in pyproject.toml (or '
            "http.base_url in this spec), or write an absolute URL",
            "/http/url",
        )


def _absolute_base(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:  # an unclosed IPv6 bracket
        return False
    return (
        parts.scheme in ("http", "https")
        and bool(parts.netloc)
        and "@" not in parts.netloc
        and not parts.query
        and not parts.fragment
        and "{" not in text
    )


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


class _Arguments:
    """The input schema's top-level properties, for the placeholder checks ($refs followed)."""

    def __init__(self, schema: Any, resolver: Any) -> None:
        self.resolver = resolver
        root = self._resolve(schema) if isinstance(schema, dict) else {}
        self.properties: dict[str, Any] = (
            root.get("properties", {}) if isinstance(root.get("properties"), dict) else {}
        )
        required = root.get("required", [])
        self.required = set(required) if isinstance(required, list) else set()

    def _resolve(self, node: Any) -> Any:
        """The node, or what its $ref points to (a root or property that is only a $ref)."""
        for _ in range(8):  # a chain of refs; a loop gives up (TN120 names real problems)
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
                return node
            if "type" in node or "properties" in node:
                return node
            import referencing.exceptions  # imported already: there is a resolver

            try:
                resolved = self.resolver.lookup(node["$ref"])
            except referencing.exceptions.Unresolvable:
                return {}
            node, self.resolver = resolved.contents, resolved.resolver
        return {}

    def check_named(self, name: str, pointer: str, what: str, problem: Add) -> None:
        if name not in self.properties:
            problem(
                "TN442", f"{what} names {name!r}, which is not an argument{self._known()}", pointer
            )

    def check_text(self, name: str, body: str, problem: Add) -> None:
        """A text or binary body's argument is a string (or null: no body)."""
        kinds = self._kinds(self.properties[name]) - {"null"}
        if kinds != {"string"}:
            what = ", ".join(sorted(kinds)) if kinds else "no single type"
            problem(
                "TN442",
                f"body_arg {name!r}: a {body} body is the text of a string argument "
                f"(it is {what}); give it type: string",
                "/http/body_arg",
            )

    def check_placeholder(self, name: str, pointer: str, problem: Add, *, required: bool) -> None:
        if name not in self.properties:
            problem(
                "TN442",
                f"placeholder {{{name}}} names no argument{self._known()}: add {name!r} to "
                "input_schema.properties",
                pointer,
            )
            return
        kinds = self._kinds(self.properties[name])
        if not required:  # a header: null leaves it out; lists and objects are comma-joined
            kinds.discard("null")
        allowed = (
            {"string", "integer"}
            if required
            else {"string", "integer", "number", "boolean", "array", "object"}
        )
        if not kinds or not kinds <= allowed:
            what = ", ".join(sorted(kinds)) if kinds else "no single type"
            wanted = "a string or an integer" if required else "a string, number, boolean or list"
            problem(
                "TN442",
                f"placeholder {{{name}}}: argument {name!r} must be {wanted} (it is {what})",
                pointer,
            )
        elif required and name not in self.required:
            problem(
                "TN442",
                f"placeholder {{{name}}} in the URL: argument {name!r} must be required (add it "
                "to input_schema.required); a URL cannot leave it out",
                pointer,
            )

    def _kinds(self, schema: Any, depth: int = 0) -> set[str]:
        """The JSON types a value can have: its type or enum, or those of every branch of its
        anyOf/oneOf ($refs followed); empty when that is not plain."""
        saved = self.resolver  # each branch's $refs are relative to where the branch is
        try:
            return self._branch_kinds(schema, depth)
        finally:
            self.resolver = saved

    def _branch_kinds(self, schema: Any, depth: int) -> set[str]:
        schema = self._resolve(schema)
        kinds = _scalar_kinds(schema)
        if kinds or not isinstance(schema, dict) or depth > 8:
            return kinds
        for keyword in ("anyOf", "oneOf"):
            branches = schema.get(keyword)
            if isinstance(branches, list) and branches:
                found: set[str] = set()
                for branch in branches:
                    more = self._kinds(branch, depth + 1)
                    if not more:
                        return set()
                    found |= more
                return found
        return set()

    def _known(self) -> str:
        return (
            f" (arguments: {', '.join(self.properties)})"
            if self.properties
            else " (the tool takes none)"
        )


def _scalar_kinds(schema: Any) -> set[str]:
    """The JSON types a property's values can have, when its schema says so plainly."""
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        names = {bool: "boolean", int: "integer", float: "number", str: "string"}
        return {names.get(type(v), "other") for v in values}
    return set()
