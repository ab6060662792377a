#!/usr/bin/env python3
"""Turn the benches' saved results into SVG charts for BENCHMARKS.md.

    python3 benches/charts.py [--criterion target/criterion] [--out docs/bench]

Reads criterion's saved estimates (`<criterion>/**/new/estimates.json`, with the
`benchmark.json` beside each for its group and name) and the scale benches' reports
(`<criterion>/scale/*.json`, written by `scale_mcp`, `scale_ext` and `sustained`), and writes:

- one bar chart per criterion group, `<out>/<group>.svg`: the median of each function in
  the group, sidewire's bars beside the floor or peer measured in the same run;
- one line chart per scale chart, `<out>/<id>.svg`: cost against N.

Python 3 standard library only; the SVG is written by hand. Charts for results that are not
there are left as they were, so a partial bench run refreshes only its own charts.
"""

import argparse
import html
import json
import math
import os
import re
import sys

WIDTH = 720
FONT = "font-family=\"-apple-system,Segoe UI,Helvetica,Arial,sans-serif\""
SIDEWIRE = "#d9480f"
OTHERS = ["#495057", "#868e96", "#1c7ed6", "#2f9e44", "#7048e8", "#e8590c"]
SERIES = ["#d9480f", "#1c7ed6", "#2f9e44", "#7048e8", "#868e96", "#e64980"]


def esc(text):
    return html.escape(str(text), quote=True)


def is_sidewire(name):
    """Bars for sidewire's own code (not a floor, not a peer)."""
    lowered = name.lower()
    if "floor" in lowered or "rmcp" in lowered or "lines_codec" in lowered or "plain" in lowered:
        return False
    return True


def format_time(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3g} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} µs"
    return f"{ns:.3g} ns"


def format_number(value):
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g} M"
    if magnitude >= 1e4:
        return f"{value / 1e3:.3g} K"
    if magnitude >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "chart"


def svg(height, body):
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" {FONT} font-size="12">\n'
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>\n{body}</svg>\n'
    )


def bar_chart(group, bars):
    """bars: [(name, median_ns)] in the order given."""
    label_width = 230
    top, row, left, right = 40, 26, label_width + 10, 90
    height = top + row * len(bars) + 16
    longest = max(ns for _, ns in bars) or 1.0
    span = WIDTH - left - right
    parts = [f'<text x="10" y="22" font-size="15" font-weight="bold">{esc(group)}</text>\n']
    parts.append(
        f'<text x="{WIDTH - 10}" y="22" text-anchor="end" fill="#666">'
        "median per iteration, shorter is better</text>\n"
    )
    others = iter(OTHERS)
    for i, (name, ns) in enumerate(bars):
        y = top + i * row
        colour = SIDEWIRE if is_sidewire(name) else next(others, OTHERS[0])
        width = max(1.0, span * ns / longest)
        weight = ' font-weight="bold"' if is_sidewire(name) else ""
        parts.append(
            f'<text x="{label_width}" y="{y + 15}" text-anchor="end"{weight}>{esc(name)}</text>\n'
            f'<rect x="{left}" y="{y + 3}" width="{width:.1f}" height="{row - 8}" fill="{colour}"/>\n'
            f'<text x="{left + width + 6:.1f}" y="{y + 15}">{esc(format_time(ns))}</text>\n'
        )
    return svg(height, "".join(parts))


def nice_ceiling(value):
    if value <= 0:
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        ceiling = step * 10 ** exponent
        if ceiling >= value:
            return ceiling
    return 10 ** (exponent + 1)


def line_chart(chart):
    series = [s for s in chart["series"] if s["points"]]
    xs = sorted({p[0] for s in series for p in s["points"]})
    ys = [p[1] for s in series for p in s["points"]]
    left, right, top, bottom = 70, 20, 40, 60
    legend = 18 * len(series)
    height = 320 + legend
    plot_w, plot_h = WIDTH - left - right, height - top - bottom - legend
    log_x = len(xs) > 1 and xs[0] > 0 and xs[-1] / xs[0] >= 50
    if log_x:
        lo, hi = math.log10(xs[0]), math.log10(xs[-1])
    else:
        lo, hi = 0.0, xs[-1] if xs else 1.0
    hi = hi if hi > lo else lo + 1.0
    y_top = nice_ceiling(max(ys) if ys else 1.0)

    def px(x):
        value = math.log10(x) if log_x else x
        return left + plot_w * (value - lo) / (hi - lo)

    def py(y):
        return top + plot_h * (1 - y / y_top)

    parts = [f'<text x="10" y="22" font-size="15" font-weight="bold">{esc(chart["title"])}</text>\n']
    for i in range(5):
        y = y_top * i / 4
        parts.append(
            f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" stroke="#e9ecef"/>\n'
            f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end" fill="#666">{esc(format_number(y))}</text>\n'
        )
    for x in xs:
        parts.append(
            f'<line x1="{px(x):.1f}" y1="{top + plot_h}" x2="{px(x):.1f}" y2="{top + plot_h + 4}" stroke="#666"/>\n'
            f'<text x="{px(x):.1f}" y="{top + plot_h + 18}" text-anchor="middle" fill="#666">{esc(format_number(x))}</text>\n'
        )
    parts.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#666"/>\n'
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#666"/>\n'
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 38}" text-anchor="middle">'
        f'{esc(chart["x_label"])}{" (log scale)" if log_x else ""}</text>\n'
        f'<text x="16" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + plot_h / 2:.1f})">{esc(chart["y_label"])}</text>\n'
    )
    for i, s in enumerate(series):
        colour = SERIES[i % len(SERIES)]
        dashed = ' stroke-dasharray="5 4"' if s["name"].startswith(("target", "waves")) else ""
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s["points"])
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dashed}/>\n')
        if not dashed:
            for x, y in s["points"]:
                parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>\n')
        ly = height - legend + 18 * i - 4
        parts.append(
            f'<line x1="{left}" y1="{ly - 4}" x2="{left + 24}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dashed}/>\n'
            f'<text x="{left + 30}" y="{ly}">{esc(s["name"])}</text>\n'
        )
    return svg(height, "".join(parts))


def criterion_groups(root):
    """{group: [(function, median_ns)]}, from every `new/estimates.json` under root."""
    groups = {}
    for directory, _, files in os.walk(root):
        if os.path.basename(directory) != "new" or "estimates.json" not in files:
            continue
        with open(os.path.join(directory, "estimates.json"), encoding="utf-8") as f:
            estimates = json.load(f)
        meta_path = os.path.join(directory, "benchmark.json")
        if os.path.exists(meta_path):
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
            group, function = meta["group_id"], meta.get("function_id") or meta["group_id"]
            if meta.get("value_str"):
                function = f"{function}/{meta['value_str']}"
        else:
            relative = os.path.relpath(os.path.dirname(directory), root).split(os.sep)
            group, function = "/".join(relative[:-1]) or relative[0], relative[-1]
        groups.setdefault(group, []).append((function, estimates["median"]["point_estimate"]))
    return groups


def scale_charts(root):
    charts = []
    directory = os.path.join(root, "scale")
    if not os.path.isdir(directory):
        return charts
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                charts.extend(json.load(f)["charts"])
    return charts


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default=os.path.join(repo, "target", "criterion"))
    parser.add_argument("--out", default=os.path.join(repo, "docs", "bench"))
    args = parser.parse_args(argv)
    if not os.path.isdir(args.criterion):
        print(f"no results in {args.criterion}: run `cargo bench -p sidewire-benches` first", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    written = []
    for group, bars in sorted(criterion_groups(args.criterion).items()):
        path = os.path.join(args.out, slug(group) + ".svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(bar_chart(group, sorted(bars)))
        written.append(path)
    for chart in scale_charts(args.criterion):
        path = os.path.join(args.out, slug(chart["id"]) + ".svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(line_chart(chart))
        written.append(path)
    for path in written:
        print(os.path.relpath(path))
    print(f"{len(written)} charts", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
