"""The fixtures and helpers of the framework test modules here (check_<framework>.py), each run
in its framework's own venv (made by `make frameworks`) by tests/test_frameworks.py, with this
module as a pytest plugin (`-p frameworks_common`). The venv holds the runtime and that
framework only, so nothing here imports the generator or the main suite's conftest; the modules
are not named test_*.py, so the main suite does not collect them.

TNX_FRAMEWORK_PACKAGES is the folder where the driver built the `kit` and `aliased` packages
(KIT_SPECS and ALIASED_SPECS in tests/test_frameworks.py)."""

from __future__ import annotations

import base64
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A 1x1 PNG: what the chart tool returns as its image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
STATS = {"count": 3, "mean": 2.5}


def _import(folder: Path, name: str) -> Any:
    sys.path.insert(0, str(folder))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture(scope="session")
def weather() -> Any:
    return _import(ROOT / "examples" / "weather", "tools")


@pytest.fixture(scope="session")
def kit() -> Any:
    package = _import(Path(os.environ["TNX_FRAMEWORK_PACKAGES"]), "kit")
    # the book spec's examples reach Anthropic's file (without_examples below means something)
    assert [t.get("input_examples") for t in package.to_anthropic() if t["name"] == "book"] == [
        [{"room": "a", "note": None}]
    ]
    return package


@pytest.fixture(scope="session")
def aliased() -> Any:
    return _import(Path(os.environ["TNX_FRAMEWORK_PACKAGES"]), "aliased")


@pytest.fixture
def aliased_tk(aliased: Any, calls: list[Any]) -> Any:
    class Handlers(aliased.ToolHandlers):  # type: ignore[misc]
        def github_create_issue(self, args: Any, ctx: Any) -> str:
            calls.append((ctx.tool_name, args.model_dump(by_alias=True), ctx.call_id, ctx.provider))
            return "created"

    return aliased.Toolkit(Handlers())


SPEC_CALL = ("github.create_issue", {"title": "Bug", "$meta": "x"})


def as_sent(schema: dict[str, Any]) -> dict[str, Any]:
    """The aliased tool's arguments as a model offered `schema` would name them."""
    (meta,) = set(schema["properties"]) - {"title"}
    return {"title": "Bug", meta: "x"}


@pytest.fixture
def calls() -> list[tuple[str, Any, str | None, str | None]]:
    """(tool, arguments as the handler got them, call id, provider), one per handler call."""
    return []


@pytest.fixture
def contexts() -> list[Any]:
    """The ToolContext of each kit handler call."""
    return []


@pytest.fixture
def weather_tk(weather: Any, calls: list[Any]) -> Any:
    class Handlers(weather.ToolHandlers):  # type: ignore[misc]
        async def get_weather(self, args: Any, ctx: Any) -> str:
            calls.append(("get_weather", args.model_dump(), ctx.call_id, ctx.provider))
            return f"{args.city}: 21C, clear"

        def now(self, args: Any, ctx: Any) -> str:
            calls.append(("now", args.model_dump(), ctx.call_id, ctx.provider))
            return "12:00"

    return weather.Toolkit(Handlers())


@pytest.fixture
def kit_tk(kit: Any, calls: list[Any], contexts: list[Any]) -> Any:
    from toolnexus_runtime.content import Image

    class Handlers(kit.ToolHandlers):  # type: ignore[misc]
        def book(self, args: Any, ctx: Any) -> str:
            calls.append(("book", args.model_dump(mode="json"), ctx.call_id, ctx.provider))
            return f"booked {args.room.value if hasattr(args.room, 'value') else args.room}"

        def chart(self, args: Any, ctx: Any) -> Any:
            calls.append(("chart", args.model_dump(mode="json"), ctx.call_id, ctx.provider))
            return [f"Sales of {args.month}:", Image(PNG, "image/png")]

        def stats(self, args: Any, ctx: Any) -> Any:
            calls.append(("stats", args.model_dump(mode="json"), ctx.call_id, ctx.provider))
            contexts.append(ctx)
            if "state" in ctx.user:  # ADK's session state: a write is saved as a state delta
                ctx.user["state"]["asked"] = args.year
            return dict(STATS)

    return kit.Toolkit(Handlers())


def run_example(script: str, capsys: Any) -> str:
    """Run examples/frameworks/<script> as `make demo` does (here, in-process); its stdout."""
    folder = ROOT / "examples" / "frameworks"
    sys.path.insert(0, str(folder))
    try:
        runpy.run_path(str(folder / script), run_name="__main__")
    finally:
        sys.path.remove(str(folder))
    return str(capsys.readouterr().out)


INVALID_CITY = "Invalid arguments for tool 'get_weather': city: Field required"


def assert_example_answers(script: str, via: str, capsys: Any, refused: str = INVALID_CITY) -> None:
    """The framework's example ran its loop: the model's wrong call came back as `refused`,
    the handler then ran through `via`, and the model answered."""
    out = run_example(script, capsys)
    assert "model got" in out and refused in out.split("model got")[1]
    assert "handler: get_weather(city='Oslo')" in out and f"via {via}" in out
    assert "answer: It is 21C and clear in Oslo." in out


def framework_loaded(framework: str) -> bool:
    return any(m == framework or m.startswith(framework + ".") for m in sys.modules)


def imports_nothing_until_asked(framework: str, function: str, toolkit: Any) -> None:
    """A fresh interpreter that imports the weather package and the integrations and makes a
    toolkit has not imported `framework`; `function(toolkit)` here has."""
    code = f"""
import sys
sys.path.insert(0, {str(ROOT / "examples" / "weather")!r})
import tools
import toolnexus_runtime.integrations as integrations
class H(tools.ToolHandlers):
    def get_weather(self, args, ctx): return "clear"
    def now(self, args, ctx): return "12:00"
tk = tools.Toolkit(H())
print(sorted(m for m in sys.modules if m == {framework!r} or m.startswith({framework + "."!r})))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    import toolnexus_runtime.integrations as integrations

    assert getattr(integrations, function)(toolkit)
    assert framework_loaded(framework)


class Slow:
    """A weather toolkit whose get_weather waits until cancelled: `started` is set once the
    handler runs, and `outcome` gets "cancelled" when the wait is cancelled."""

    def __init__(self, weather: Any) -> None:
        import asyncio

        self.started = asyncio.Event()
        self.outcome: list[str] = []
        slow = self

        class Handlers(weather.ToolHandlers):  # type: ignore[misc]
            async def get_weather(self, args: Any, ctx: Any) -> str:
                slow.started.set()
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    slow.outcome.append("cancelled")
                    raise
                return "late"

            def now(self, args: Any, ctx: Any) -> str:
                return "12:00"

        self.toolkit = weather.Toolkit(Handlers())

    async def cancel(self, call: Any) -> None:
        """Start the coroutine `call` as a task, cancel it once the handler runs, and check the
        handler saw the cancellation."""
        import asyncio

        task = asyncio.ensure_future(call)
        await asyncio.wait_for(self.started.wait(), 10)
        task.cancel()
        try:
            await asyncio.wait_for(task, 10)
        except asyncio.CancelledError:
            pass
        assert self.outcome == ["cancelled"]


@pytest.fixture
def slow(weather: Any) -> Slow:
    return Slow(weather)


def without_examples(offered: Any) -> bool:
    """Whether a framework's tool form holds no `examples` (the kit's book spec has them)."""
    import json

    return "examples" not in json.dumps(offered, default=str)
