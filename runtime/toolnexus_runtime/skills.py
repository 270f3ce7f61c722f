"""Agent skills (executor kind `skill`): the `skill` tool and `skills_prompt()`, served from the
generated package's `schemas/skills.json` (each skill's name, description, SKILL.md body and the
files beside it, made at build time from the project's skills folder).

Both texts follow the seed project's, so prompts written for it keep working: the tool returns
a `<skill_content>` block, and the prompt is a fixed preamble plus a sorted list of the skills.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .datatypes import ToolError
from .schemas import load_schema

if TYPE_CHECKING:
    from .datatypes import ToolContext, ToolSpec
    from .executors.base import BoundTool, SourceOptions, ToolkitView

PREAMBLE = (
    "Skills provide specialized instructions and workflows for specific tasks.\n"
    "Use the skill tool to load a skill when a task matches its description."
)


def skills_prompt(package: str) -> str:
    """The catalogue of a generated package's skills, for a system prompt (sorted by name,
    byte-stable)."""
    skills = sorted(load_schema(package, "skills"), key=lambda skill: skill["name"])
    if not skills:
        return "No skills are currently available."
    lines = [PREAMBLE, "", "## Available Skills"]
    lines += [f"- **{skill['name']}**: {skill['description']}" for skill in skills]
    return "\n".join(lines)


def skill_content(skill: dict[str, Any]) -> str:
    """What the skill tool returns for one skill: its body, where it lives, the files beside it
    (paths relative to the project that holds the skills folder)."""
    base = skill["path"].rpartition("/")[0] or "."
    lines = [
        f'<skill_content name="{skill["name"]}">',
        f"# Skill: {skill['name']}",
        "",
        skill["body"].strip(),
        "",
        f"Base directory for this skill: {base}",
        "Relative paths in this skill (e.g., scripts/, reference/) are relative to this base "
        "directory.",
    ]
    if skill["files"]:
        more = skill.get("more_files", 0)
        lines += ["", "<skill_files>"]
        lines += [f"<file>{base}/{name}</file>" for name in skill["files"]]
        lines += [f"<!-- and {more} more files -->"] if more else []
        lines.append("</skill_files>")
    lines.append("</skill_content>")
    return "\n".join(lines)


class Skills:
    """The skill tool of one Toolkit."""

    def __init__(self, toolkit: ToolkitView[Any]) -> None:
        self.package = toolkit.SCHEMAS

    def bind(self, spec: ToolSpec) -> BoundTool:
        assert spec.binding is not None
        if self.package is None:
            raise TypeError("the skill tool needs a generated package's schemas/skills.json")
        catalogue = spec.binding["skill"]
        skills = {skill["name"]: skill for skill in load_schema(self.package, catalogue)}

        async def call(args: BaseModel, ctx: ToolContext) -> str:
            name = args.model_dump(mode="json")["name"]
            skill = skills.get(name)
            if skill is None:
                raise ToolError(
                    f'Skill "{name}" not found. Available skills: {", ".join(sorted(skills))}'
                )
            return skill_content(skill)

        return call

    async def aclose(self) -> None:
        """Nothing to close."""


def executor(toolkit: ToolkitView[Any], options: SourceOptions) -> Skills:
    return Skills(toolkit)
