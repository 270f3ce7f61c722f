"""The conformance server's tools: each does what the official MCP conformance suite's server
scenarios ask of a tool of that name (content types, logging, progress, errors), with the
public runtime API only: content parts from `toolnexus_runtime.content`, `ctx.log`,
`ctx.report_progress` and `ToolError`."""

from __future__ import annotations

import asyncio
import base64
import struct
import time

from conformance_tools import ToolContext, ToolError, ToolHandlers
from conformance_tools.models import (
    JsonSchema202012ToolArgs,
    TestAudioContentArgs,
    TestEmbeddedResourceArgs,
    TestErrorHandlingArgs,
    TestImageContentArgs,
    TestMultipleContentTypesArgs,
    TestSimpleTextArgs,
    TestToolWithLoggingArgs,
    TestToolWithProgressArgs,
)
from toolnexus_runtime.content import Audio, Image, Part, Resource

# A 1x1 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def wav(samples: int = 8) -> bytes:
    """A silent 8 kHz mono 8-bit WAV of `samples` samples."""
    data = b"\x80" * samples
    header = struct.pack("<4sI4s", b"RIFF", 36 + len(data), b"WAVE")
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, 8000, 8000, 1, 8)
    return header + fmt + struct.pack("<4sI", b"data", len(data)) + data


class ConformanceTools(ToolHandlers):
    def test_simple_text(self, args: TestSimpleTextArgs, ctx: ToolContext) -> str:
        return "This is a simple text response for testing."

    def test_image_content(self, args: TestImageContentArgs, ctx: ToolContext) -> Image:
        return Image(PNG, "image/png")

    def test_audio_content(self, args: TestAudioContentArgs, ctx: ToolContext) -> Audio:
        return Audio(wav(), "audio/wav")

    def test_embedded_resource(self, args: TestEmbeddedResourceArgs, ctx: ToolContext) -> Resource:
        return Resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )

    def test_multiple_content_types(
        self, args: TestMultipleContentTypesArgs, ctx: ToolContext
    ) -> list[str | Part]:
        return [
            "Multiple content types test:",
            Image(PNG, "image/png"),
            Resource(
                "test://mixed-content-resource",
                text='{"test":"data","value":123}',
                mime_type="application/json",
            ),
        ]

    async def test_tool_with_logging(self, args: TestToolWithLoggingArgs, ctx: ToolContext) -> str:
        ctx.log("info", "Tool execution started")
        await asyncio.sleep(0.05)
        ctx.log("info", "Tool processing data")
        await asyncio.sleep(0.05)
        ctx.log("info", "Tool execution completed")
        return "Tool with logging executed successfully"

    def test_tool_with_progress(self, args: TestToolWithProgressArgs, ctx: ToolContext) -> str:
        # A sync handler (it runs in a worker thread): progress goes out from there too.
        for step in (0, 50, 100):
            ctx.report_progress(step, 100, f"step {step // 50 + 1} of 3")
            if step < 100:
                time.sleep(0.05)
        return "Tool with progress executed successfully"

    def test_error_handling(self, args: TestErrorHandlingArgs, ctx: ToolContext) -> str:
        raise ToolError("This tool intentionally returns an error for testing")

    def json_schema_2020_12_tool(self, args: JsonSchema202012ToolArgs, ctx: ToolContext) -> str:
        return f"Hello {args.name or 'nobody'}"
