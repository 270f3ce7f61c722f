"""Images, audio, documents and links a tool returns reach each provider in the form it takes.

A handler returns content parts (toolnexus_runtime.content); each provider's tool loop runs
through its official SDK against scripted turns (examples/scripted.py), and the request the SDK
sent next is read back: the tool result as it went over the wire. What a provider cannot take
is described in the text with what was not sent, and logged. Before content parts existed, a
tool could return text or JSON only, and an MCP server's image became "[image image/png]"."""

from __future__ import annotations

import base64
import logging
import sys
from typing import Any

import pytest
from conftest import ROOT, build_in
from toolnexus_runtime.content import Audio, Image, Resource, ResourceLink, Text

sys.path.insert(0, str(ROOT / "examples"))
import scripted  # noqa: E402

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00"
SPECS = {
    "snapshot.yaml": {"description": "A screenshot, a report, a recording and notes"},
    "vector.yaml": {"description": "An SVG drawing"},
}
QUESTION = [{"role": "user", "content": "Take a snapshot"}]
TURNS: list[scripted.Turn] = [[("call_1", "snapshot", {})], "Done."]


class Handlers:
    def snapshot(self, args: Any, ctx: Any) -> list[Any]:
        return [
            "Here it is:",
            Image(PNG, "image/png"),
            Resource("file:///reports/q3.pdf", blob=PDF, mime_type="application/pdf"),
            Audio(WAV, "audio/wav"),
            Resource("file:///notes.txt", text="remember the milk", mime_type="text/plain"),
            ResourceLink("https://example.com/big.csv", "big.csv", mime_type="text/csv"),
        ]

    def vector(self, args: Any, ctx: Any) -> Image:
        return Image(b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml")


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_in(tmp_path_factory.mktemp("content"), SPECS)


@pytest.fixture(scope="module")
def tk(pkg: Any) -> Any:
    return pkg.Toolkit(Handlers())


def losses(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot carry" in r.getMessage()]


def test_a_handler_returns_parts_and_the_result_keeps_them(tk: Any) -> None:
    result = tk.execute_sync("snapshot", {})
    assert not result.is_error
    assert [type(part) for part in result.content] == [
        Text,
        Image,
        Resource,
        Audio,
        Resource,
        ResourceLink,
    ]
    assert result.output.splitlines() == [
        "Here it is:",
        "[image: image/png, 69 bytes]",
        "[resource file:///reports/q3.pdf (application/pdf), 51 bytes]",
        "[audio: audio/wav, 32 bytes]",
        "[resource file:///notes.txt (text/plain)]",
        "remember the milk",
        "[resource link https://example.com/big.csv: big.csv (text/csv)]",
    ]


def test_anthropic_gets_image_and_document_blocks(
    tk: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from anthropic.types import MessageParam
    from pydantic import TypeAdapter

    client, script = scripted.client_for("anthropic", TURNS)
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        tk.run_anthropic(client, model="scripted", messages=list(QUESTION), max_tokens=64)
    [sent] = script.requests[1]["messages"][-1]["content"]  # as the SDK sent it
    TypeAdapter(MessageParam).validate_python(script.requests[1]["messages"][-1])
    blocks = sent["content"]
    assert [block["type"] for block in blocks] == [
        "text",
        "image",
        "document",
        "text",
        "text",
        "text",
    ]
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[1]["source"]["data"]) == PNG
    assert blocks[2]["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(PDF).decode(),
    }
    assert blocks[3]["text"] == "[audio: audio/wav, 32 bytes] (not sent: it takes no audio)"
    assert blocks[4]["text"] == "[resource file:///notes.txt (text/plain)]\nremember the milk"
    assert losses(caplog) == [
        "Tool 'snapshot' returned [audio: audio/wav, 32 bytes], which Anthropic tool results "
        "cannot carry (it takes no audio): the model gets a text note in its place"
    ]


def test_openai_responses_gets_input_image_and_input_file(tk: Any) -> None:
    from openai.types.responses.response_input_item_param import FunctionCallOutput
    from pydantic import TypeAdapter

    client, script = scripted.client_for("openai_responses", TURNS)
    tk.run_openai_responses(client, model="scripted", input=list(QUESTION))
    sent = script.requests[1]["input"]
    [output] = [item for item in sent if item.get("type") == "function_call_output"]
    TypeAdapter(FunctionCallOutput).validate_python(output, strict=True)
    items = output["output"]
    assert [item["type"] for item in items] == [
        "input_text",
        "input_image",
        "input_file",
        "input_text",
        "input_text",
        "input_text",
    ]
    assert items[1]["image_url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert items[2] == {
        "type": "input_file",
        "file_data": "data:application/pdf;base64," + base64.b64encode(PDF).decode(),
        "filename": "q3.pdf",
    }
    assert "(not sent: function call outputs carry no audio)" in items[3]["text"]


def test_openai_chat_tool_messages_carry_text_and_say_what_was_not_sent(
    tk: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from openai.types.chat import ChatCompletionToolMessageParam
    from pydantic import TypeAdapter

    client, script = scripted.client_for("openai", TURNS)
    with caplog.at_level(logging.WARNING, logger="toolnexus_runtime"):
        tk.run_openai(client, model="scripted", messages=list(QUESTION))
    message = script.requests[1]["messages"][-1]
    TypeAdapter(ChatCompletionToolMessageParam).validate_python(message, strict=True)
    text_only = "(not sent: OpenAI Chat tool messages carry text only)"
    assert message["content"].splitlines() == [
        "Here it is:",
        f"[image: image/png, 69 bytes] {text_only}",
        f"[resource file:///reports/q3.pdf (application/pdf), 51 bytes] {text_only}",
        f"[audio: audio/wav, 32 bytes] {text_only}",
        "[resource file:///notes.txt (text/plain)]",
        "remember the milk",
        "[resource link https://example.com/big.csv: big.csv (text/csv)]",
    ]
    assert len(losses(caplog)) == 3  # the image, the PDF and the sound, each logged


def test_gemini_gets_inline_data_parts_in_the_function_response(tk: Any) -> None:
    from google.genai import types

    client, script = scripted.client_for("gemini", TURNS)
    run = tk.run_gemini(client, model="scripted", contents="Take a snapshot")
    reply = run.messages[2]
    types.Content.model_validate(reply)  # the SDK's own types, raw bytes and all
    [part] = script.requests[1]["contents"][2]["parts"]  # as the SDK sent it
    response = part["functionResponse"]
    # (the SDK writes these field names in snake case; the API's JSON takes both spellings)
    blobs = [p.get("inlineData") or p["inline_data"] for p in response["parts"]]
    assert [b.get("mimeType") or b["mime_type"] for b in blobs] == ["image/png", "application/pdf"]
    assert [base64.urlsafe_b64decode(blob["data"]) for blob in blobs] == [PNG, PDF]
    said = response["response"]["output"]
    assert "[audio: audio/wav, 32 bytes] (not sent: function responses take no audio/wav)" in said


def test_bedrock_gets_image_and_document_blocks_boto3_accepts(tk: Any) -> None:
    client, stubber = scripted.client_for("bedrock", TURNS)  # the Stubber validates each request
    run = tk.run_bedrock(client, modelId="scripted", messages="Take a snapshot")
    stubber.assert_no_pending_responses()
    [block] = run.messages[2]["content"]
    content = block["toolResult"]["content"]
    assert [next(iter(item)) for item in content] == [
        "text",
        "image",
        "document",
        "text",
        "text",
        "text",
    ]
    assert content[1]["image"] == {"format": "png", "source": {"bytes": PNG}}
    assert content[2]["document"] == {"format": "pdf", "name": "q3 pdf", "source": {"bytes": PDF}}
    assert content[3] == {"text": "[audio: audio/wav, 32 bytes] (not sent: it takes no audio)"}


def test_an_image_type_a_provider_refuses_is_described_never_sent(tk: Any) -> None:
    call = {"type": "tool_use", "id": "t", "name": "vector", "input": {}}
    [anthropic] = tk.anthropic_tool_results([call])
    assert anthropic["content"] == [
        {
            "type": "text",
            "text": "[image: image/svg+xml, 41 bytes] (not sent: it takes no image/svg+xml images)",
        }
    ]
    [bedrock] = tk.bedrock_tool_results([{"toolUse": {"toolUseId": "t", "name": "vector"}}])
    assert "not sent: it takes no image/svg+xml images" in str(bedrock)
    gemini = tk.gemini_reply([{"functionCall": {"name": "vector", "args": {}}}])
    assert "parts" not in gemini["parts"][0]["functionResponse"]


def test_errors_and_plain_text_stay_one_string(tk: Any, pkg: Any) -> None:
    class Failing(Handlers):
        def snapshot(self, args: Any, ctx: Any) -> Any:
            raise pkg.ToolError("camera unplugged")

    failing = pkg.Toolkit(Failing())
    call = {"type": "tool_use", "id": "t", "name": "snapshot", "input": {}}
    [result] = failing.anthropic_tool_results([call])
    assert result["content"] == "camera unplugged" and result["is_error"] is True


def test_a_list_mixing_parts_and_data_is_an_error_result(pkg: Any) -> None:
    class Mixed(Handlers):
        def snapshot(self, args: Any, ctx: Any) -> Any:
            return [Image(PNG, "image/png"), {"not": "a part"}]

    result = pkg.Toolkit(Mixed()).execute_sync("snapshot", {})
    assert result.is_error and result.error_type == "invalid_output"
    assert "holds only str and toolnexus_runtime.content parts" in result.output


def test_parts_refuse_base64_text_for_bytes() -> None:
    with pytest.raises(TypeError, match="takes the raw bytes, not str"):
        Image(base64.b64encode(PNG).decode(), "image/png")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one of text= and blob="):
        Resource("file:///x")
