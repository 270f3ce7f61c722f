"""The built-in tools (executor kind `builtin`): bash, read, write, edit, grep, glob, webfetch,
question, apply_patch and todowrite, with the seed project's (and opencode's) names and
arguments, safe by default.

`Toolkit(handlers, workspace=PATH, allow_shell=True, fetch_allow=None, output_limit=30_000,
ask=None)`:
- `workspace` (default: the current folder when the Toolkit is made) is the one folder the file
  tools read and write; a path whose real location is outside it is an error result and nothing
  is touched (`workspace.py`). A workspace that does not exist fails `Toolkit(...)`.
- `allow_shell=False` makes every `bash` call an error result, whatever the build holds.
- `fetch_allow`: host names `webfetch` may reach (then only those), also when they are private.
- `output_limit`: characters of `bash`, `read`, `grep` and `webfetch` output, with a note of what
  was cut.
- `ask(questions)`: answers the `question` tool (sync or async); without it the model is told
  that no one can be asked.

Every refusal is a `ToolError`, so the model reads exactly why (an error result).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from importlib.util import find_spec
from inspect import isawaitable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..datatypes import ToolError
from . import files, patch, shell, web
from .worker import in_thread
from .workspace import Workspace

if TYPE_CHECKING:
    from ..datatypes import ToolContext, ToolSpec
    from ..executors.base import BoundTool, SourceOptions
    from ..executors.base import ToolkitView as ToolkitCore

Run = Callable[[dict[str, Any]], Awaitable[Any]]


class Builtins:
    """The built-in tools of one Toolkit."""

    def __init__(self, options: SourceOptions) -> None:
        if not isinstance(options.output_limit, int) or options.output_limit < 1:
            raise ValueError(
                f"output_limit must be a positive integer, not {options.output_limit!r}"
            )
        self.workspace = Workspace(options.workspace)
        self.allow_shell = options.allow_shell
        self.fetch_allow = web.allow_list(options.fetch_allow)
        self.limit = options.output_limit
        self.ask = options.ask
        self.tools: dict[str, Run] = {
            "bash": self.bash,
            "read": self.read,
            "write": self.write,
            "edit": self.edit,
            "grep": self.grep,
            "glob": self.glob,
            "webfetch": self.webfetch,
            "question": self.question,
            "apply_patch": self.apply_patch,
            "todowrite": self.todowrite,
        }

    def bind(self, spec: ToolSpec) -> BoundTool:
        assert spec.binding is not None
        name = spec.binding["builtin"]
        run = self.tools.get(name)
        if run is None:
            raise TypeError(
                f"this toolnexus-runtime has no built-in tool {name!r} (it has: "
                f"{', '.join(self.tools)}); upgrade toolnexus-runtime"
            )
        if name == "grep" and find_spec("regex") is None:
            raise ImportError(
                "the built-in grep needs the regex module (a pattern timeout that re lacks): "
                "pip install 'toolnexus-runtime[builtins]'"
            )

        async def call(args: BaseModel, ctx: ToolContext) -> Any:
            return await run(args.model_dump(mode="json", exclude_none=True))

        return call

    async def aclose(self) -> None:
        """Nothing stays open between calls."""

    # -- the tools: blocking file work runs in a thread of its own (worker.py), off the loop --

    async def bash(self, args: dict[str, Any]) -> str:
        if not self.allow_shell:
            raise ToolError(
                "bash is switched off for this toolkit (allow_shell=False): no command was run. "
                "Use the other tools, or say what you would run."
            )
        return await shell.bash(self.workspace, args, self.limit)

    async def read(self, args: dict[str, Any]) -> str:
        return await in_thread(lambda stop: files.read(self.workspace, args, self.limit, stop))

    async def write(self, args: dict[str, Any]) -> str:
        return await in_thread(lambda stop: files.write(self.workspace, args))

    async def edit(self, args: dict[str, Any]) -> str:
        return await in_thread(lambda stop: files.edit(self.workspace, args))

    async def grep(self, args: dict[str, Any]) -> str:
        return await in_thread(lambda stop: files.grep(self.workspace, args, self.limit, stop))

    async def glob(self, args: dict[str, Any]) -> str:
        text = await in_thread(lambda stop: files.glob(self.workspace, args, stop))
        return files.cap(text, self.limit)

    async def webfetch(self, args: dict[str, Any]) -> str:
        return await web.webfetch(args, self.fetch_allow, self.limit, self.workspace.root)

    async def apply_patch(self, args: dict[str, Any]) -> str:
        return await in_thread(lambda stop: patch.apply(self.workspace, args))

    async def question(self, args: dict[str, Any]) -> Any:
        if self.ask is None:
            raise ToolError(
                "No one can be asked here: this toolkit has no way to reach the user (no ask "
                "callback). Decide with what you know, or finish and say what you need to know."
            )
        questions = args["questions"]
        if asyncio.iscoroutinefunction(self.ask):
            answer = await self.ask(questions)
        else:  # a person answering: as long as it takes, in a thread of its own
            ask = self.ask
            answer = await in_thread(lambda stop: ask(questions))
            if isawaitable(answer):
                answer = await answer
        return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)

    async def todowrite(self, args: dict[str, Any]) -> str:
        todos = args["todos"]
        if not todos:
            return "(no todos)"
        return "\n".join(f"[{'x' if todo['completed'] else ' '}] {todo['text']}" for todo in todos)


def executor(toolkit: ToolkitCore[Any], options: SourceOptions) -> Builtins:
    return Builtins(options)
