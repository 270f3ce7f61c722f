"""MkDocs hook: fills the generated parts of the docs from the code at build time.

A page asks for one with a line `<!-- generated: NAME -->`:
- `configuration`: every [tool.toolnexus-gen] key (toolnexus_gen.config.pyproject.KEYS), each
  target's options (targets.registry.OPTIONS), toolset keys and known hosted tools (config.many);
- `diagnostics`: every diagnostic code, from the catalogue `toolnexus-gen explain` prints
  (toolnexus_gen.diagnostics.catalogue.entry), with its failing example.
So a key, an option or a code added to the code appears here without an edit of the docs.
"""

from __future__ import annotations

import html
import re
from typing import Any

MARK = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARK.sub(lambda match: RENDERERS[match.group(1)](), markdown)


def _md(text: str) -> str:
    """Catalogue prose as markdown: one paragraph, code spans kept, the rest escaped."""
    text = " ".join(text.split())
    if text.count("`") % 2:  # a lone tick (in a list of characters, say): no code spans then
        return re.sub(r"([\\*_\[\]`])", r"\\\1", html.escape(text, quote=False))
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`"):
            out.append(part)
        else:
            part = html.escape(part, quote=False)
            out.append(re.sub(r"([\\*_\[\]])", r"\\\1", part))
    return "".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def configuration() -> str:
    from toolnexus_gen.config.many import KNOWN_HOSTED, TOOL_SEARCH, TOOLSET_KEYS
    from toolnexus_gen.config.pyproject import KEYS
    from toolnexus_gen.targets.registry import OPTIONS

    lines = [
        "| key | type | default | meaning | example |",
        "|---|---|---|---|---|",
    ]
    for key in KEYS.values():
        lines.append(
            f'| <span id="{key.name}"></span>`{key.name}` | {_cell(key.kind)} | '
            f"{_cell(key.default)} | {_cell(key.meaning)} | `{key.name} = {_cell(key.example)}` |"
        )
    lines += [
        "",
        "## Per-target options",
        "",
        "Each target has a table of its own, `[tool.toolnexus-gen.<target>]`:",
        "",
        "| table | option | allowed values |",
        "|---|---|---|",
    ]
    for target, options in OPTIONS.items():
        for option, values in options.items():
            allowed = ", ".join(f'`"{value}"`' for value in values)
            kind = "a list of" if option == "transforms" else "one of"
            lines.append(f"| `[tool.toolnexus-gen.{target}]` | `{option}` | {kind} {allowed} |")
    lines += [
        "",
        "## Toolsets and hosted tools",
        "",
        "A toolset, `[tool.toolnexus-gen.toolsets.<name>]` or `<name> = {...}` under "
        "`[tool.toolnexus-gen.toolsets]`, takes: "
        + ", ".join(f"`{key}`" for key in TOOLSET_KEYS)
        + ".",
        "",
        "`tool_search` is one of " + ", ".join(f'`"{v}"`' for v in TOOL_SEARCH) + ".",
        "",
        "A hosted tool under `[tool.toolnexus-gen.hosted]` is `name = true` for one of "
        + ", ".join(f"`{name}`" for name in KNOWN_HOSTED)
        + ", or a table of each provider's own entry (`anthropic`, `openai_responses`, `gemini`).",
        "",
    ]
    return "\n".join(lines)


FENCE = {"json": "json", "yaml": "yaml", "yml": "yaml", "toml": "toml", "py": "python"}


def diagnostics() -> str:
    from toolnexus_gen.diagnostics.catalogue import all_codes, area, entry
    from toolnexus_gen.diagnostics.examples import EXAMPLES

    out: list[str] = []
    current = None
    for code in all_codes():
        found = entry(code)
        assert found is not None
        name = area(code)[0]
        if name != current:
            current = name
            out += [f"## {name}", ""]
        out += [f"### {code}: {_md(found.title)} {{ #{code} }}", ""]
        applies = f"**Applies to:** {_md(found.applies)}."
        if found.severity:
            applies += f" **Severity:** {found.severity}."
        out += [applies, ""]
        if found.provider_error:
            out += [f"**Provider says:** {_md(found.provider_error)}", ""]
        if found.why:
            out += [_md(found.why), ""]
        out += [f"**Fix:** {_md(found.fix)}", ""]
        if found.transform:
            out += [f"**Transform:** `{found.transform}` (opt in per target).", ""]
        example = EXAMPLES.get(code)
        if example is not None:
            out += _example(example)
    return "\n".join(out)


def _example(example: Any) -> list[str]:
    out = ['??? example "Example"', ""]
    for path, content in example.files.items():
        if isinstance(content, bytes):
            out += [f"    `{path}` holds the bytes `{content!r}`.", ""]
            continue
        fence = FENCE.get(path.rsplit(".", 1)[-1], "text")
        if "{n}" in path:
            out += [
                f"    {example.copies} files like this one, `n` = 0 to {example.copies - 1}:",
                "",
            ]
        out += [f'    ```{fence} title="{path}"']
        out += [f"    {line}".rstrip() for line in content.rstrip("\n").split("\n")]
        out += ["    ```", ""]
    env = "".join(f"{name}={value!r} " for name, value in example.env.items())
    out += [
        "    ```text",
        f"    $ {env}{example.command}",
        f"    {example.expect}: ...",
        "    ```",
        "",
    ]
    if example.not_run:
        out += [f"    Not run by the tests: {_md(example.not_run)}.", ""]
    return out


RENDERERS = {"configuration": configuration, "diagnostics": diagnostics}
