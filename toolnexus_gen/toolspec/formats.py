"""The `format` values a call is refused for: the generated argument model types them
(AwareDatetime, date, time, timedelta, AnyUrl, UUID, IPv4Address/IPv6Address) or gives them a
pattern (email, idn-email, ulid, hostname, byte: PATTERN_FORMATS), and the runtime validates
every call with it. Any other format (int32, int64, float, double, uri-reference, an API's own
name) is a StrictInt, StrictFloat or StrictStr there: an annotation, as JSON Schema's validation
reads `format` by default."""

from __future__ import annotations

from typing import Any

ASSERTED_FORMATS = frozenset(
    {"date-time", "date", "time", "duration", "uri", "uuid", "ipv4", "ipv6", "byte"}
    | {"email", "idn-email", "ulid", "hostname"}
)

# Formats whose pydantic type needs a package beyond pydantic (EmailStr: email-validator; ULID:
# python-ulid), which a generated package must not need: the field is a str, still checked, by a
# pattern (an e-mail address as the HTML standard's <input type=email> takes it; an IDN address
# loosely; a ULID's 26 Crockford base32 characters). And `byte`, base64 text: pydantic's Base64Str
# would hand a handler the decoded text, refusing any content that is not UTF-8 (an image, a
# file: what base64 carries) and any URL-safe or unpadded text (Google's APIs write both), so the
# field is the text as written, checked to be base64 (groups of four characters of either
# alphabet, the last group of two or three, padded or not; line breaks anywhere), and a handler
# decodes it as its API says.
PATTERN_FORMATS = {
    "email": r"^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$",
    "idn-email": r"^[^@\s]+@[^@\s]+$",
    "ulid": r"^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$",
    "byte": (
        r"^[ \t\r\n]*(?:(?:[A-Za-z0-9+/_-][ \t\r\n]*){4})*"
        r"(?:(?:[A-Za-z0-9+/_-][ \t\r\n]*){2}(?:(?:=[ \t\r\n]*){2}|[A-Za-z0-9+/_-][ \t\r\n]*(?:=[ \t\r\n]*)?)?)?$"
    ),
}


def takes_pattern(node: dict[str, Any]) -> bool:
    """Whether the model checks the node's format by its pattern (PATTERN_FORMATS): only on a
    string (or null) alone without a pattern of its own. Beside the node's own pattern it is not
    added; on a string that may be another type it would be a `constr(...)` in a union, which
    mypy refuses as a call in a type annotation."""
    kind = node.get("type")
    kinds = {kind} if isinstance(kind, str) else set()
    if isinstance(kind, list):
        kinds = {k for k in kind if isinstance(k, str)}
    return (
        node.get("format") in PATTERN_FORMATS
        and "pattern" not in node
        and not kinds - {"string", "null"}
    )
