"""Content beyond text: images, audio, embedded resources and resource links a tool returns.

A handler returns one part, or a list mixing text (`str`) and parts:

    from toolnexus_runtime.content import Image, Resource

    def chart(self, args, ctx):
        return ["Sales by month:", Image(png_bytes, "image/png")]

A tool from an MCP server returns the same parts when its server sends them. The result's
`content` holds the parts, and its `output` their text: each part that is not text described in
brackets (`[image: image/png, 2.1 kB]`), for whatever carries text only. Each provider's reply
carries the parts that provider takes in a tool result (see `toolnexus_runtime.providers`); a part
it cannot take stays that description, with what was not sent and why, and the loss is logged as
a warning on the `toolnexus_runtime` logger: never dropped in silence. Our MCP server sends the
parts as MCP content.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

logger = logging.getLogger("toolnexus_runtime")


def _raw(data: Any, what: str) -> bytes:
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if not isinstance(data, bytes):
        raise TypeError(
            f"{what} takes the raw bytes, not {type(data).__name__} (base64 text? decode it "
            "first with base64.b64decode)"
        )
    return data


def _mime(mime_type: Any, what: str) -> str:
    if not isinstance(mime_type, str) or "/" not in mime_type:
        raise ValueError(f"{what} needs a MIME type such as 'image/png', not {mime_type!r}")
    return mime_type.lower()


@dataclass(frozen=True, slots=True)
class Text:
    """Text, as a `str` in a list of parts is."""

    text: str


@dataclass(frozen=True, slots=True)
class Image:
    """An image: its bytes and MIME type (`image/png`, `image/jpeg`, `image/gif`, `image/webp`
    reach every provider that takes images)."""

    data: bytes = field(repr=False)
    mime_type: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _raw(self.data, "Image"))
        object.__setattr__(self, "mime_type", _mime(self.mime_type, "Image"))


@dataclass(frozen=True, slots=True)
class Audio:
    """A sound: its bytes and MIME type (`audio/wav`, `audio/mpeg`, ...)."""

    data: bytes = field(repr=False)
    mime_type: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", _raw(self.data, "Audio"))
        object.__setattr__(self, "mime_type", _mime(self.mime_type, "Audio"))


@dataclass(frozen=True, slots=True)
class Resource:
    """An embedded resource: the contents of a document named by a URI, as text or as bytes
    (exactly one of `text` and `blob`)."""

    uri: str
    text: str | None = None
    blob: bytes | None = field(default=None, repr=False)
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("Resource takes exactly one of text= and blob=")
        if self.blob is not None:
            object.__setattr__(self, "blob", _raw(self.blob, "Resource blob"))
        if self.mime_type is not None:
            object.__setattr__(self, "mime_type", _mime(self.mime_type, "Resource"))


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the model (or the user) may read elsewhere: sent as text to every
    provider (a link loses nothing in words), as a `resource_link` over MCP."""

    uri: str
    name: str
    mime_type: str | None = None
    title: str | None = None
    description: str | None = None
    size: int | None = None


Part: TypeAlias = Text | Image | Audio | Resource | ResourceLink
PARTS = (Text, Image, Audio, Resource, ResourceLink)


def parts_of(value: Any) -> tuple[Part, ...] | None:
    """The parts a handler returned, or None when it returned no part (data, text)."""
    if isinstance(value, PARTS):
        return (value,)
    if type(value) not in (list, tuple) or not any(isinstance(item, PARTS) for item in value):
        return None
    parts: list[Part] = []
    for item in value:
        if isinstance(item, str):
            parts.append(Text(item))
        elif isinstance(item, PARTS):
            parts.append(item)
        else:
            raise TypeError(
                "a list of content parts holds only str and toolnexus_runtime.content parts "
                f"(Text, Image, Audio, Resource, ResourceLink), not {type(item).__name__}"
            )
    return tuple(parts)


def size(count: int) -> str:
    if count < 1000:
        return f"{count} bytes"
    if count < 1_000_000:
        return f"{count / 1000:.1f} kB"
    return f"{count / 1_000_000:.1f} MB"


def describe(part: Part) -> str:
    """A part as text: text as it is, anything else described in brackets."""
    if isinstance(part, Text):
        return part.text
    if isinstance(part, (Image, Audio)):
        kind = "image" if isinstance(part, Image) else "audio"
        return f"[{kind}: {part.mime_type}, {size(len(part.data))}]"
    if isinstance(part, Resource):
        mime = f" ({part.mime_type})" if part.mime_type else ""
        if part.text is not None:
            return f"[resource {part.uri}{mime}]\n{part.text}"
        assert part.blob is not None
        return f"[resource {part.uri}{mime}, {size(len(part.blob))}]"
    words = [part.title or part.name]
    if part.description:
        words.append(f"- {part.description}")
    if part.mime_type:
        words.append(f"({part.mime_type})")
    return f"[resource link {part.uri}: {' '.join(words)}]"


def text_of(parts: Iterable[Part]) -> str:
    return "\n".join(describe(part) for part in parts)


def in_words(part: Part) -> bool:
    """Whether text carries all of a part: text, a text resource, a resource link."""
    return isinstance(part, (Text, ResourceLink)) or (
        isinstance(part, Resource) and part.text is not None
    )


def has_media(parts: Sequence[Part]) -> bool:
    """Whether any part is more than text (a provider then replies with a list of blocks)."""
    return bool(parts) and any(not isinstance(part, Text) for part in parts)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{b64(data)}"


def file_name(part: Resource) -> str:
    """A file name for a resource sent as a file: the last segment of its URI."""
    tail = part.uri.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
    return tail or "resource"


WEB_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types Anthropic, OpenAI and Bedrock all take."""


def image_of(part: Part) -> tuple[str, bytes] | None:
    """(MIME type, bytes) of an image part or of an embedded resource holding an image."""
    if isinstance(part, Image):
        return part.mime_type, part.data
    if isinstance(part, Resource) and part.blob is not None and part.mime_type:
        if part.mime_type.startswith("image/"):
            return part.mime_type, part.blob
    return None


def unsent(tool: str, part: Part, provider: str, why: str) -> str:
    """The text a provider's reply carries for a part it cannot take, the loss logged."""
    logger.warning(
        "Tool %r returned %s, which %s tool results cannot carry (%s): the model gets a text "
        "note in its place",
        tool,
        describe(part).split("\n", 1)[0],
        provider,
        why,
        extra={"tool_name": tool},
    )
    return f"{describe(part)} (not sent: {why})"


# -- MCP content blocks -------------------------------------------------------------------------


def _field(block: Any, *names: str) -> Any:
    for name in names:
        value = block.get(name) if isinstance(block, Mapping) else getattr(block, name, None)
        if value is not None:
            return value
    return None


def _decoded(text: Any) -> bytes | None:
    try:
        return base64.b64decode(text or "", validate=True)
    except (binascii.Error, TypeError, ValueError):
        return None


def from_mcp(block: Any) -> Part:
    """One MCP content block (the SDK's object or its JSON) as a part; a block this runtime
    does not know, or base64 that does not decode, becomes a text part saying so."""
    kind = _field(block, "type")
    mime = _field(block, "mime_type", "mimeType")
    if kind == "text":
        return Text(str(_field(block, "text") or ""))
    if kind in ("image", "audio"):
        data = _decoded(_field(block, "data"))
        if data is None or not isinstance(mime, str) or "/" not in mime:
            return Text(f"[{kind}: {mime or 'no MIME type'}, data that is not valid base64]")
        return (Image if kind == "image" else Audio)(data, mime)
    if kind == "resource":
        inner = _field(block, "resource")
        uri = str(_field(inner, "uri") or "")
        mime = _field(inner, "mime_type", "mimeType")
        mime = mime if isinstance(mime, str) and "/" in mime else None
        text = _field(inner, "text")
        if text is not None:
            return Resource(uri, text=str(text), mime_type=mime)
        blob = _decoded(_field(inner, "blob"))
        if blob is None:
            return Text(f"[resource {uri}: data that is not valid base64]")
        return Resource(uri, blob=blob, mime_type=mime)
    if kind == "resource_link":
        declared = _field(block, "size")
        return ResourceLink(
            str(_field(block, "uri") or ""),
            str(_field(block, "name") or ""),
            mime if isinstance(mime, str) else None,
            _field(block, "title"),
            _field(block, "description"),
            declared if isinstance(declared, int) else None,
        )
    return Text(f"[{kind} content, which this runtime does not read]")


def to_mcp(part: Part) -> dict[str, Any]:
    """One part as an MCP content block (JSON)."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, (Image, Audio)):
        kind = "image" if isinstance(part, Image) else "audio"
        return {"type": kind, "data": b64(part.data), "mimeType": part.mime_type}
    if isinstance(part, Resource):
        inner: dict[str, Any] = {"uri": part.uri}
        if part.mime_type:
            inner["mimeType"] = part.mime_type
        if part.text is not None:
            inner["text"] = part.text
        else:
            assert part.blob is not None
            inner["blob"] = b64(part.blob)
        return {"type": "resource", "resource": inner}
    link: dict[str, Any] = {"type": "resource_link", "uri": part.uri, "name": part.name}
    for key, value in (
        ("title", part.title),
        ("description", part.description),
        ("mimeType", part.mime_type),
        ("size", part.size),
    ):
        if value is not None:
            link[key] = value
    return link
