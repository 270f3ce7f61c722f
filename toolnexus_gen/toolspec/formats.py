"""The `format` values a call is refused for: the generated argument model types them
(AwareDatetime, date, time, timedelta, AnyUrl, UUID, IPv4Address/IPv6Address) or gives them a
pattern (email, idn-email, ulid, hostname; byte: base64's characters), and the runtime validates
every call with it. Any other format (int32, int64, float, double, uri-reference, an API's own
name) is a StrictInt, StrictFloat or StrictStr there: an annotation, as JSON Schema's validation
reads `format` by default."""

from __future__ import annotations

ASSERTED_FORMATS = frozenset(
    {"date-time", "date", "time", "duration", "uri", "uuid", "ipv4", "ipv6", "byte"}
    | {"email", "idn-email", "ulid", "hostname"}
)
