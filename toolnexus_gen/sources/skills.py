"""Agent skills: each `**/SKILL.md` under the folder `skills` in [tool.toolnexus-gen] names, with
YAML front matter (`name`, `description`), joins one `skill` tool whose `name` argument is an
enum of the skills. The package gets `schemas/skills.json` (each skill's name, description,
body and the files beside it), which the runtime's `toolnexus_runtime.skills` serves: calling
`skill` returns that body, and `skills_prompt()` the catalogue for a system prompt.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_gen.config.options import BuildOptions
from toolnexus_gen.config.pyproject import Setting
from toolnexus_gen.diagnostics import Diagnostic, Severity
from toolnexus_gen.fs.paths import display_path, folder_files, read_inside
from toolnexus_gen.ir import Contributed, Contribution
from toolnexus_gen.sources.builtins import SPECS, at_setting, document
from toolnexus_gen.toolspec.load import MAX_FILE_BYTES, LoadError, parse_yaml

CATALOGUE = "schemas/skills.json"
SKILL_FILE = "SKILL.md"
# The Agent Skills format's rule for names: lowercase letters, digits and single hyphens.
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
MAX_FILES = 100  # files listed beside a skill; more are counted, not listed
_FENCE = re.compile(r"---[ \t]*\r?\n")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: str  # the SKILL.md, relative to the project
    body: str
    files: tuple[str, ...]  # beside it, relative to its folder
    more: int  # files beside it not listed (over MAX_FILES)
    display: str
    place: tuple[int, int]  # of its name in the SKILL.md


def contribute(options: BuildOptions) -> Contribution:
    setting = options.skills
    if setting is None:
        return Contribution()
    folder: Path = setting.value
    if not folder.is_dir():
        message = f"skills folder {display_path(folder)!r} does not exist (or is not a folder)"
        return Contribution(diagnostics=(at_setting(setting, "TN422", message, Severity.ERROR),))
    left_out: list[tuple[str, str]] = []
    files = folder_files(folder, left_out)
    skills: dict[str, Skill] = {}
    diagnostics: list[Diagnostic] = []
    homes = {os.path.dirname(rel) for rel in files if os.path.basename(rel) == SKILL_FILE}
    diagnostics += _links(folder, left_out, homes)
    for rel in files:
        if os.path.basename(rel) != SKILL_FILE:
            continue
        skill = _read(folder, rel, files, homes, options.root, diagnostics)
        if skill is None:
            continue
        first = skills.setdefault(skill.name, skill)
        if first is not skill:
            diagnostics.append(
                Diagnostic(
                    skill.display,
                    *skill.place,
                    "TN425",
                    f"skill name {skill.name!r} is already taken by {first.display}; "
                    "rename one of them",
                )
            )
    catalogue = [_entry(skills[name]) for name in sorted(skills)]
    text = json.dumps(catalogue, indent=2, ensure_ascii=False) + "\n"
    if not skills:
        found = sum(1 for rel in files if os.path.basename(rel) == SKILL_FILE)
        if found:
            message = (
                f"none of the {found} {SKILL_FILE} under {display_path(folder)} could be read "
                "(see the errors above): the package has no skill tool"
            )
        else:
            message = (
                f"no {SKILL_FILE} under {display_path(folder)}: the package has no skill tool "
                "(a skill is a folder holding a SKILL.md with name and description front matter)"
            )
        diagnostics.append(at_setting(setting, "TN426", message, Severity.WARNING))
        return Contribution((), ((CATALOGUE, text),), tuple(diagnostics))
    return Contribution((_tool(setting, sorted(skills)),), ((CATALOGUE, text),), tuple(diagnostics))


def _tool(setting: Setting, names: list[str]) -> Contributed:
    """The skill tool: skill.json with the names as the enum of its one argument."""
    path = SPECS / "skill.json"
    data = json.loads(path.read_text("utf-8"))
    data["input_schema"]["properties"]["name"]["enum"] = names
    binding: dict[str, object] = {"skill": "skills"}  # served from schemas/skills.json
    return Contributed("skill:skill", document(path, setting, binding, data), binding)


def _entry(skill: Skill) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": skill.name,
        "description": skill.description,
        "path": skill.path,
        "body": skill.body,
        "files": list(skill.files),
    }
    if skill.more:
        entry["more_files"] = skill.more
    return entry


def _links(folder: Path, left_out: list[tuple[str, str]], homes: set[str]) -> list[Diagnostic]:
    """What the links the folder's walk left out mean: a SKILL.md whose content lives outside
    the skills folder is an error (it would be copied into the package); a file beside a skill
    is left out of its files, with a warning."""
    found = []
    for rel, why in left_out:
        where, name = os.path.split(rel)
        display = f"{display_path(folder / where)}/{name}"  # the link, never its target
        if os.path.basename(rel) == SKILL_FILE:
            message = (
                f"{SKILL_FILE} is not read: {why}. A skill's text goes into the generated package, "
                "so it must live in the skills folder: copy the file in (or move it there and link "
                "the other way)"
            )
            found.append(Diagnostic(display, 1, 1, "TN490", message))
        elif (home := _home(rel, homes)) is not None:
            skill = f"{display_path(folder / home)}/{SKILL_FILE}"
            message = f"left out of the files listed with {skill}: {why}"
            found.append(Diagnostic(display, 1, 1, "TN491", message, Severity.WARNING))
    return found


def _read(
    folder: Path,
    rel: str,
    files: dict[str, os.stat_result],
    homes: set[str],
    root: Path,
    diagnostics: list[Diagnostic],
) -> Skill | None:
    path = folder / rel
    display = display_path(path)

    def bad(message: str, line: int = 1, col: int = 1, code: str = "TN423") -> None:
        diagnostics.append(Diagnostic(display, line, col, code, message))

    try:
        raw = read_inside(folder, rel, MAX_FILE_BYTES)
    except OSError as exc:
        diagnostics.append(
            Diagnostic(display, 1, 1, "TN490", f"{SKILL_FILE} cannot be read: {exc}")
        )
        return None
    if len(raw) > MAX_FILE_BYTES:
        bad(f"{SKILL_FILE} is larger than {MAX_FILE_BYTES} bytes (the limit of a spec file)")
        return None
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        bad(f"{SKILL_FILE} is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})")
        return None
    opening = _FENCE.match(text)
    closing = None
    if opening:
        closing = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE).search(text, opening.end())
    if opening is None or closing is None:
        bad(
            f"{SKILL_FILE} needs YAML front matter: a first line ---, then name: and "
            "description:, then a line ---"
        )
        return None
    try:
        data, positions = parse_yaml(text[opening.end() : closing.start()], display)
    except LoadError as exc:
        found = exc.diagnostic
        bad(f"malformed front matter: {found.message}", found.line + 1, found.col)
        return None

    def place(key: str) -> tuple[int, int]:
        line, col = positions.value(f"/{key}")
        return line + 1, col

    if not isinstance(data, dict):
        bad("the front matter must be a mapping with name: and description:", 2)
        return None
    before = len(diagnostics)
    for key in ("name", "description"):
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            what = "is missing" if key not in data else "must be a non-empty string"
            bad(f"front matter {key!r} {what}", *(place(key) if key in data else (2, 1)))
    if len(diagnostics) > before:
        return None
    name = data["name"].strip()
    if len(name) > MAX_NAME or not NAME.fullmatch(name):
        bad(
            f"skill name {name!r} must be lowercase letters, digits and single hyphens, at most "
            f"{MAX_NAME} characters (the Agent Skills format)",
            *place("name"),
            code="TN424",
        )
        return None
    home = os.path.dirname(rel)
    beside = sorted(
        other[len(home) + 1 :] if home else other
        for other in files
        if other != rel
        and (not home or other.startswith(home + "/"))
        and _home(other, homes) == home
    )
    return Skill(
        name,
        " ".join(data["description"].split()),
        Path(os.path.relpath(path, root)).as_posix(),
        text[closing.end() :].lstrip("\r\n"),
        tuple(beside[:MAX_FILES]),
        max(0, len(beside) - MAX_FILES),
        display,
        place("name"),
    )


def _home(rel: str, homes: set[str]) -> str | None:
    """The nearest folder above `rel` that holds a SKILL.md (its skill), if any."""
    folder = os.path.dirname(rel)
    while True:
        if folder in homes:
            return folder
        if not folder:
            return None
        folder = os.path.dirname(folder)
