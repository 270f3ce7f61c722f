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
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from toolnexus_gen.fs.paths import SPEC_SUFFIXES
from toolnexus_gen.targets import TARGETS
from toolnexus_gen.targets.reading import Imported, ImportError_

__all__ = ["OPENAPI", "ImportError_", "Imported", "plan", "read", "spec_text"]

OPENAPI = "openapi"


def read(
    fmt: str,
    path: Path,
    *,
    server: str | None = None,
    tags: Sequence[str] = (),
    env_prefix: str | None = None,
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
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not parts.fragment


class _Dumper(yaml.SafeDumper):
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


def plan(imported: Imported, specs_dir: Path, suffix: str, force: bool) -> dict[Path, str]:
    """The files to write; raises ImportError_ when one exists (unless force) or clashes."""
    files: dict[Path, str] = {}
    existing = {p.stem: p for p in specs_dir.glob("*") if p.suffix in SPEC_SUFFIXES}
    clashes = []
    for name, spec in sorted(imported.specs.items()):
        path = specs_dir / f"{name}{suffix}"
        other = existing.get(name)
        if other is not None and (other != path or not force):
            clashes.append(other)
        files[path] = spec_text(spec, suffix)
    if clashes:
        listed = ", ".join(p.as_posix() for p in clashes)
        hint = " (pass --force to replace them)" if all(p.suffix == suffix for p in clashes) else ""
        raise ImportError_(f"these specs already exist: {listed}; nothing written{hint}")
    return files
