"""Writes the Performance page's figures from a benchmark run: a markdown table per part and an
SVG chart of each figure against its target (docs/performance/). `make bench` calls it at the
end of bench/run.py, so the page shows what the last run measured and nothing drawn by hand.

The chart plots each figure that has a numeric target as a share of that target: 1.0 is the
target, below it is met. The SVG is written here (a few rectangles and labels), byte-stable for
the same figures, so the docs need no plotting library.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "performance"
UNIT = r"(x|%|s|GB)"
CLAUSE = re.compile(r"(<=|<|>=)\s*([\d.]+)\s*" + UNIT)

Result = tuple[str, str, str, "bool | None", str]  # figure, value, target, met, part


def share_of_target(value: str, target: str) -> float | None:
    """How much of its target a figure uses (1.0 = the target; below is met), or None."""
    shares = []
    for op, limit, unit in CLAUSE.findall(target):
        measured = _measured(value, unit)
        if measured is None:
            return None
        bound = float(limit) * (1000 if unit == "GB" else 1)
        shares.append(bound / measured if op == ">=" else measured / bound)
    return max(shares) if shares else None


def _measured(value: str, unit: str) -> float | None:
    if unit == "x":
        found = re.search(r"= \*{0,2}([\d.]+)x", value) or re.search(r"([\d.]+)x", value)
    elif unit == "%":
        found = re.search(r"([\d.]+)%", value)
    elif unit == "GB":
        found = re.search(r"([\d.]+) MB", value)
    else:
        ms = re.search(r"([\d.]+) ms", value)
        if ms:
            return float(ms.group(1)) / 1000
        found = re.search(r"([\d.]+) s\b", value)
    return float(found.group(1)) if found else None


def table(results: list[Result], part: str) -> str:
    lines = ["| figure | result | target | |", "|---|---|---|---|"]
    for figure, value, target, met, where in results:
        if where == part:
            verdict = "" if met is None else ("met" if met else "**missed**")
            cells = [
                html.escape(c, quote=False).replace("|", "\\|") for c in (figure, value, target)
            ]
            lines.append(f"| {cells[0]} | {cells[1]} | {cells[2]} | {verdict} |")
    return "\n".join(lines) + "\n"


def chart(results: list[Result], part: str) -> str | None:
    bars = [
        (figure, share)
        for figure, value, target, _, where in results
        if where == part and (share := share_of_target(value, target)) is not None
    ]
    if not bars:
        return None
    label_w, bar_w, row_h, top = 520, 300, 26, 30
    scale = max(1.5, max(share for _, share in bars) * 1.1)
    height = top + row_h * len(bars) + 30
    width = label_w + bar_w + 70
    x1 = label_w + bar_w / scale
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<text x="{label_w}" y="18" font-weight="bold">share of target (1.0 = the target; '
        "shorter is better)</text>",
    ]
    for i, (figure, share) in enumerate(bars):
        y = top + i * row_h
        colour = "#2e7d32" if share <= 1 else "#c62828"
        label = html.escape(figure if len(figure) <= 80 else figure[:77] + "...")
        out += [
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{label}</text>',
            f'<rect x="{label_w}" y="{y + 4}" width="{bar_w * min(share, scale) / scale:.1f}" '
            f'height="{row_h - 8}" fill="{colour}"/>',
            f'<text x="{label_w + bar_w * min(share, scale) / scale + 4:.1f}" y="{y + 16}">'
            f"{share:.2f}</text>",
        ]
    bottom = top + row_h * len(bars)
    out += [
        f'<line x1="{x1:.1f}" y1="{top - 4}" x2="{x1:.1f}" y2="{bottom + 4}" stroke="#000" '
        'stroke-dasharray="4 3"/>',
        f'<text x="{x1:.1f}" y="{bottom + 20}" text-anchor="middle">target</text>',
        "</svg>",
    ]
    return "\n".join(out) + "\n"


def write(results: list[Result], header: str, parts: list[str], out: Path = OUT) -> None:
    """docs/performance/figures.md and one chart per part that has targets. The parts this run
    measured replace those of earlier runs (results.json keeps them), so a partial run
    (`--execute`, `--builds`) updates only its own tables."""
    out.mkdir(parents=True, exist_ok=True)
    store = out / "results.json"
    old = json.loads(store.read_text("utf-8")) if store.exists() else {"parts": {}}
    ran = {part for *_, part in results}
    merged = {p: rows for p, rows in old["parts"].items() if p not in ran}
    for part in ran:
        merged[part] = {"run": header, "rows": [list(r[:4]) for r in results if r[4] == part]}
    store.write_text(json.dumps({"parts": merged}, indent=1, ensure_ascii=False) + "\n", "utf-8")
    results = [(*row, part) for part, body in merged.items() for row in body["rows"]]  # type: ignore[misc]
    md = [
        "<!-- written by bench/report.py from `make bench` runs: do not edit -->",
        "",
    ]
    for index, part in enumerate(parts):
        if not any(r[4] == part for r in results):
            continue
        md += [f"### {part}", "", f"*{merged[part]['run']}*", "", table(results, part)]
        svg = chart(results, part)
        name = f"chart-{index}.svg"
        if svg:
            (out / name).write_text(svg, "utf-8")
            md += [f"![{part}: each figure as a share of its target](performance/{name})", ""]
    (out / "figures.md").write_text("\n".join(md), "utf-8")
