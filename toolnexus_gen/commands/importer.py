"""`toolnexus-gen import FORMAT FILE`: existing provider tool JSON becomes one spec per tool;
`import openapi FILE` makes one spec per operation of an OpenAPI document (sources/openapi.py).

Building the imported specs for the same target gives the provider file back, with these
normalisations (documented in the docs: Spec files, Importing provider JSON):
- a wrapper around the tool list (`{"tools": [...]}`, a JSON-RPC `tools/list` result, Bedrock's
  `toolConfig`, a Gemini request body) is dropped: the build writes the bare list the target
  always writes;
- tools come out in name order;
- Gemini's upper-case OpenAPI types (`"OBJECT"`) become JSON Schema's lower-case ones;
- a tool without a description gets its title or name as description (specs need one);
- keys a spec cannot hold are reported as not imported (for example Anthropic `cache_control`,
  MCP `icons` and `_meta`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from toolnexus_gen.config.pyproject import Config
from toolnexus_gen.fs.output import atomic_write
from toolnexus_gen.fs.paths import SPEC_SUFFIXES
from toolnexus_gen.memo import Memo
from toolnexus_gen.progress import Progress, unseen
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.reading import Imported, ImportError_

__all__ = ["OPENAPI", "ImportError_", "Imported", "plan", "read", "spec_text", "toolsets_text"]

OPENAPI = "openapi"
TOOL_LIMIT = 128  # tools in one OpenAI request: the smallest limit a target has
TOOLSET_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def read(
    fmt: str,
    path: Path,
    *,
    server: str | None = None,
    tags: Sequence[str] = (),
    env_prefix: str | None = None,
    progress: Progress = unseen,
) -> Imported:
    """The specs a provider file (or, for `openapi`, an OpenAPI document) holds; raises
    ImportError_ with a located message, or DiagnosticsError for an OpenAPI document."""
    if fmt == OPENAPI:
        from toolnexus_gen.sources import openapi

        if server is not None and not _absolute(server):
            raise ImportError_(f"--server {server!r} must be an absolute http(s) URL")
        if env_prefix is not None:
            why = openapi.env_prefix_problem(env_prefix)
            if why is not None:
                raise ImportError_(f"--env-prefix {env_prefix!r} must be a variable name ({why})")
        return openapi.read(
            path,
            server=server.rstrip("/") if server else None,
            tags=tags,
            env_prefix=env_prefix,
            progress=progress,
        )
    if server is not None or tags or env_prefix is not None:
        raise ImportError_("--server, --tag and --env-prefix apply to `import openapi` only")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportError_(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ImportError_(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    out = Imported()
    try:
        TARGETS[fmt].read(data, out)
    except ImportError_ as exc:
        raise ImportError_(f"{path}: {exc}") from None
    if not out.specs:
        raise ImportError_(f"{path}: no tools found for format {fmt}")
    return out


def _absolute(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.fragment


# libyaml's emitter where PyYAML has it (the same text, several times faster: a large
# document's specs took a minute to write with the pure-Python one)
_SafeDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_SafeDumper):  # type: ignore[misc]
    """Plain YAML: a value reached twice is written twice, never as an &anchor/*alias."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    """Text of several lines as a literal block (|), as a person would write it."""
    style = "|" if "\n" in data.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _text)


def spec_text(spec: dict[str, Any], suffix: str) -> str:
    if suffix == ".json":
        return json.dumps(spec, indent=2, ensure_ascii=False) + "\n"
    text: str = yaml.dump(spec, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)
    return text


def file_text(imported: Imported, name: str, suffix: str) -> str:
    """The text of the spec file of the tool `name`: the text the import's build check read it
    from (`carry`), when that is of this very spec; else the spec rendered now."""
    spec = imported.specs[name]
    checked = getattr(imported, "checked", {}).get(name)
    if checked is not None and checked[0] is spec and checked[1] == suffix:
        text: str = checked[2]
        return text
    return spec_text(spec, suffix)


def plan(
    imported: Imported, specs_dir: Path, suffix: str, force: bool, progress: Progress = unseen
) -> dict[Path, str]:
    """The files to write; raises ImportError_ when one exists (unless force) or clashes.
    An OpenAPI import's shared schemas go into their folder as JSON; one already there with
    the same text is no clash (two imports of one document, with different --tag)."""
    files: dict[Path, str] = {}
    existing = {p.stem: p for p in specs_dir.glob("*") if p.suffix in SPEC_SUFFIXES}
    clashes = []
    for name in sorted(imported.specs):
        path = specs_dir / f"{name}{suffix}"
        other = existing.get(name)
        if other is not None and (other != path or not force):
            clashes.append(other)
        files[path] = file_text(imported, name, suffix)
        progress("specs", len(files), len(imported.specs))
    shared: dict[str, Any] = getattr(imported, "shared", {})
    for name, schema in shared.items():
        path = specs_dir / str(getattr(imported, "folder", "")) / f"{name}.json"
        text = spec_text(schema, ".json")
        if path.is_file():
            if path.read_text("utf-8", "replace") == text:
                continue
            if not force:
                clashes.append(path)
        files[path] = text
    if clashes:
        listed = ", ".join(p.as_posix() for p in clashes)
        hint = " (pass --force to replace them)" if all(p.suffix == suffix for p in clashes) else ""
        raise ImportError_(f"these specs already exist: {listed}; nothing written{hint}")
    return files


def toolsets_text(imported: Imported, taken: set[str], source: str) -> str:
    """TOML for [tool.toolnexus-gen.toolsets] when an import holds more tools than one request
    takes: a toolset per tag (its group), a large tag cut into parts of at most TOOL_LIMIT
    tools; "" when none is needed. `taken`: the toolset names the project already has."""
    if len(imported.specs) <= TOOL_LIMIT:
        return ""
    groups: dict[str, list[str]] = dict(getattr(imported, "groups", {}))
    grouped = {tool for tools in groups.values() for tool in tools}
    untagged = sorted(name for name in imported.specs if name not in grouped)
    lines = [
        f"\n# toolsets written by `toolnexus-gen import openapi {source}`: one per tag, as no "
        f"request takes all {len(imported.specs)} tools (OpenAI: at most {TOOL_LIMIT})"
    ]
    entries: list[tuple[str, str, list[str]]] = []
    for group, tools in sorted(groups.items()):
        if len(tools) <= TOOL_LIMIT:
            entries.append((group, "groups", [group]))
        else:
            entries.extend(_parts(group, sorted(tools)))
    entries.extend(_parts("untagged", untagged) if len(untagged) > TOOL_LIMIT else [])
    if untagged and len(untagged) <= TOOL_LIMIT:
        entries.append(("untagged", "tools", untagged))
    for base, key, names in entries:
        name = TOOLSET_NAME.sub("_", base).strip("_")[:60] or "toolset"
        if not name[0].isalpha():  # a toolset name starts with a letter or _
            name = f"t_{name}"[:60]
        name, n = name, 2
        while name in taken:
            name, n = f"{name[:60]}_{n}", n + 1
        taken.add(name)
        listed = ", ".join(json.dumps(item) for item in names)
        lines.append(f"[tool.toolnexus-gen.toolsets.{name}]\n{key} = [{listed}]")
    return "\n".join(lines) + "\n"


def _parts(base: str, tools: list[str]) -> list[tuple[str, str, list[str]]]:
    count = -(-len(tools) // TOOL_LIMIT)
    size = -(-len(tools) // count)
    return [(f"{base}_{i + 1}", "tools", tools[i * size : (i + 1) * size]) for i in range(count)]


def add_toolsets(imported: Imported, config: Config, source: Path) -> None:
    """Append the toolsets a large import needs to the project's pyproject.toml (made when
    there is none), and say so in the import's notes: the build then checks each request
    against its provider's limit per toolset, and the whole set only warns."""
    taken = {toolset.name for toolset in config.many.toolsets}
    text = toolsets_text(imported, taken, source.name)
    if not text:
        return
    path = config.path or config.root / "pyproject.toml"
    before = path.read_text("utf-8") if path.is_file() else ""
    if before and not before.endswith("\n"):
        before += "\n"
    atomic_write(path, (before + text).encode("utf-8"))
    count = text.count("[tool.toolnexus-gen.toolsets.")
    imported.notes.append(
        f"{len(imported.specs)} tools are more than one request takes ({TOOL_LIMIT}): "
        f"{count} toolsets added to {path.name}, one per tag (to_openai(toolset=...))"
    )


def carry(
    imported: Imported, config: Config, folder: Path, suffix: str, memo: Memo | None = None
) -> None:
    """An OpenAPI import's specs, each with `profile: reach`, checked by a build with the
    project's targets and target options before anything is written (sources/carry.py): a tool
    some targets cannot take is kept for the others (`targets.exclude`), one no target takes is
    left out, each said with the build's own reason (TN416, TN415), all in this one run.
    `memo` is the project's build memo (else a new one); the schemas the check finds valid are
    added to it, for `models_home` once the specs are written."""
    from toolnexus_gen.sources.carry import carried, options_for, settle, whole_set_limits

    folder_name = str(getattr(imported, "folder", ""))
    specs = {f"{name}{suffix}": carried(spec) for name, spec in imported.specs.items()}
    shared = {
        f"{folder_name}/{name}.json": spec_text(schema, ".json")
        for name, schema in getattr(imported, "shared", {}).items()
    }
    options = options_for(config, folder)
    if options.base_url is None and getattr(imported, "base_url_hint", None) is not None:
        # a relative server: the project sets base_url (the summary says so); checked as if set
        options = replace(options, base_url="https://base-url.invalid")
    if memo is None:
        memo = Memo()
    settled = settle(specs, options, spec_text, shared, memo)
    checked: dict[str, tuple[dict[str, Any], str, str]] = getattr(imported, "checked", {})
    refused = {refusal.spec: refusal for refusal in settled.refused}
    for rel in specs:
        name = rel[: -len(suffix)]
        refusal = refused.get(rel)
        if refusal is not None and refusal.left_out:
            del imported.specs[name]
            imported.notes.append(
                f"{name}: left out (TN415): no target can take it: {refusal.reason}"
            )
            continue
        imported.specs[name] = settled.specs[rel]
        checked[name] = (settled.specs[rel], suffix, settled.texts[rel])
        if refusal is not None:
            imported.notes.append(
                f"{name}: not sent to {', '.join(refusal.targets)} (TN416, targets.exclude): "
                f"{refusal.reason}"
            )
    groups: dict[str, list[str]] = getattr(imported, "groups", {})
    for group, tools in list(groups.items()):
        groups[group] = [tool for tool in tools if tool in imported.specs]
    limit = len(imported.specs) > TOOL_LIMIT  # toolsets answer a whole-set limit
    imported.notes += [
        f"the imported tools build one by one, but not as a whole set: {text}"
        for text in settled.unplaced
        if not (limit and any(f"[{code}]" in text for code in whole_set_limits()))
    ]


def models_home(config: Config, folder: Path) -> Path | None:
    """Where what the import's check found valid may be left, in the build's memo (the output
    folder's cache), so that the first build of the imported specs checks none again: an output
    folder a build made, or one that does not exist yet; None for a folder of someone else's
    files (the build will say so, not the import)."""
    from toolnexus_gen.fs.output import MANIFEST
    from toolnexus_gen.fs.paths import CACHE_DIR
    from toolnexus_gen.sources.carry import options_for

    out = options_for(config, folder).out
    if out.exists() and not ((out / MANIFEST).is_file() or (out / CACHE_DIR).is_dir()):
        return None
    return out
