"""A picture of a memory plan: steps on x, addresses on y, one rectangle per tensor (SVG, pure text).

``render_plan(contract, path)`` takes the plan contract of docs/plan-format.md (the dict
``zcspec plan --json`` prints, optional keys allowed) and writes an SVG file;
``plan_svg`` returns the text. The regions that hold activations are stacked
as in GE's model memory, the feature map first and the zero-copy region after
it (GE: graph_mem_assigner.cc `AssignZeroCopyMemory`); weights live elsewhere and are left out by default.
Each rectangle spans the tensor's lifetime [first, last + 1) and its bytes
[offset, offset + size); hovering shows its name, placement and lifetime.
Aliases are drawn as dashed outlines over their root's memory.
"""
from __future__ import annotations

import hashlib
from html import escape

from zcspec.spec.errors import SpecError
from zcspec.spec.invariants._util import families, space_time_overlaps
from zcspec.spec.observables import PlanObservation
from zcspec.spec.observables.plan_contract import plan_from_contract

DEFAULT_REGIONS = ("feature_map", "zero_copy")
COLOURS = {
    "feature_map": ("#4e79a7", "#76a1cf", "#2f5b87", "#8fb6e0", "#3d6a99"),
    "zero_copy_in": ("#59a14f",),
    "zero_copy_out": ("#f28e2b",),
    "zero_copy": ("#edc948",),
    "weight": ("#9c755f",),
    "fixed": ("#bab0ac",),
    "overlap": ("#e15759",),
}
LEGEND = (("feature_map", "feature map tensor"), ("zero_copy_in", "zero-copy graph input"),
          ("zero_copy_out", "zero-copy graph output"), ("zero_copy", "other zero-copy tensor"),
          ("overlap", "overlap (a violation)"))
ARENA_LEGEND = (("feature_map", "activations (reused)"), ("zero_copy", "caller's buffers (user I/O)"),
                ("fixed", "state"), ("overlap", "overlap (a violation)"))


def render_plan(contract: dict | PlanObservation, path: str, *, title: str | None = None,
                regions: tuple[str, ...] | None = None, width: int = 1000, height: int = 600) -> str:
    """Write the plan's picture to ``path`` (SVG) and return ``path``.

    ``contract`` is the plan contract dict (``zcspec plan --json``; tools' extra
    keys are ignored, see ``plan_from_contract``) or a parsed :class:`PlanObservation`.
    ObservationFormatError if the contract is malformed; SpecError if ``path``
    does not end in ``.svg``.
    """
    if not path.endswith(".svg"):
        raise SpecError(f"{path}: plan pictures are SVG files; use a name ending in .svg")
    text = plan_svg(contract, title=title, regions=regions, width=width, height=height)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def plan_svg(contract: dict | PlanObservation, *, title: str | None = None,
             regions: tuple[str, ...] | None = None, width: int = 1000, height: int = 600) -> str:
    """The SVG text of the plan's picture (deterministic: the same plan gives the same bytes).
    ``regions``: the regions drawn, stacked from address 0 up; by default GE's feature map and
    zero-copy region, or for a plan in its own arenas every arena but the constants, reused
    memory first."""
    plan = contract if isinstance(contract, PlanObservation) else plan_from_contract(contract)
    if regions is None:
        regions = drawn_regions(plan)
    frame = _Frame(plan, regions, width, height)
    parts = [_header(frame, title or f"memory plan: {len(plan.tensors)} tensors, {len(plan.order)} steps")]
    parts += _region_bands(frame)
    parts += _tensors(plan, frame)
    parts += _overlaps(plan, frame)
    parts += _region_labels(frame)
    parts += _axes(frame)
    parts += _legend(frame, LEGEND if plan.ge_shaped else ARENA_LEGEND)
    parts.append("</svg>\n")
    return "\n".join(parts)


_KIND_ORDER = ("activations", "scratch", "user_io", "state")
_KIND_COLOURS = {"activations": "feature_map", "scratch": "feature_map", "user_io": "zero_copy", "state": "fixed",
                 "constants": "weight"}


def plans_svg(plans: list[tuple[PlanObservation, str]], *, width: int = 1000, height: int = 600) -> str:
    """The pictures of several plans of one program (``(plan, title)`` pairs) stacked top to bottom at
    one address scale: each plot is as tall as its drawn bytes, the largest ``height`` pixels, so a
    plan that needs more memory is visibly taller (``zcspec diff``)."""
    totals = [max(sum(p.regions.get(r, 0) for r in drawn_regions(p)), 1) for p, _ in plans]
    margins = _Frame.TOP + _Frame.BOTTOM
    heights = [margins + max(round((height - margins) * t / max(totals)), 40) for t in totals]
    parts, y = [], 0
    for (plan, title), h in zip(plans, heights):
        inner = plan_svg(plan, title=title, width=width, height=h)
        parts.append(inner.replace("<svg ", f'<svg x="0" y="{y}" ', 1))
        y += h
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" viewBox="0 0 {width} {y}">\n'
            f'<rect width="100%" height="100%" fill="white"/>')
    return "\n".join([head, *parts, "</svg>\n"])


def drawn_regions(plan: PlanObservation) -> tuple[str, ...]:
    """The regions a picture of ``plan`` draws by default (see :func:`plan_svg`)."""
    return DEFAULT_REGIONS if plan.ge_shaped else _drawn_arenas(plan)


def _drawn_arenas(plan: PlanObservation) -> tuple[str, ...]:
    rank = {k: i for i, k in enumerate(_KIND_ORDER)}
    return tuple(sorted((r for r in plan.regions if plan.arena(r).kind in rank),
                        key=lambda r: (rank[plan.arena(r).kind], r)))


class _Frame:
    """Maps (step, address) to pixels: plot area inside margins, address 0 at the bottom."""

    LEFT, RIGHT, TOP, BOTTOM = 78, 190, 34, 44

    def __init__(self, plan: PlanObservation, regions, width: int, height: int):
        self.width, self.height = width, height
        self.steps = max(len(plan.order), 1)
        self.bases: dict[str, int] = {}
        total = 0
        for r in regions:  # regions stacked in model-memory order
            self.bases[r] = total
            total += plan.regions.get(r, 0)
        self.total = max(total, 1)
        self.regions = tuple(r for r in regions if plan.regions.get(r, 0) > 0)
        self.sizes = {r: plan.regions.get(r, 0) for r in regions}
        self.pw = width - self.LEFT - self.RIGHT
        self.ph = height - self.TOP - self.BOTTOM

    def x(self, step: float) -> float:
        return self.LEFT + self.pw * step / self.steps

    def y(self, address: float) -> float:
        return self.TOP + self.ph * (1 - address / self.total)


def _header(frame: _Frame, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{frame.width}" height="{frame.height}" '
            f'viewBox="0 0 {frame.width} {frame.height}" font-family="Helvetica, Arial, sans-serif" font-size="11">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n'
            f'<text x="{frame.LEFT}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>')


def _region_bands(frame: _Frame) -> list[str]:
    out = []
    for i, r in enumerate(frame.regions):
        lo, hi = frame.bases[r], frame.bases[r] + frame.sizes[r]
        y0, y1 = frame.y(hi), frame.y(lo)
        out.append(f'<rect x="{frame.LEFT}" y="{y0:.2f}" width="{frame.pw}" height="{y1 - y0:.2f}" '
                   f'fill="{"#f4f4f4" if i % 2 == 0 else "#fbfbfb"}" stroke="#999" stroke-width="0.5"/>')
    return out


def _region_labels(frame: _Frame) -> list[str]:
    out = []
    for r in frame.regions:
        y0 = frame.y(frame.bases[r] + frame.sizes[r])
        out.append(f'<text x="{frame.LEFT + frame.pw - 4}" y="{y0 + 12:.2f}" text-anchor="end" fill="#333" '
                   f'stroke="white" stroke-width="3" paint-order="stroke">{escape(r)} ({_bytes(frame.sizes[r])})</text>')
    return out


def _overlaps(plan: PlanObservation, frame: _Frame) -> list[str]:
    """Red boxes where two tensors alive at the same step share bytes (what LAYOUT-NO-OVERLAP reports)."""
    by_region: dict[str, list] = {}
    for f in families(plan):
        by_region.setdefault(f.region, []).append(f)
    out = []
    for region, fs in by_region.items():
        if region not in frame.bases:
            continue
        base = frame.bases[region]
        for a, b in space_time_overlaps(fs):
            x0, x1 = frame.x(max(a.first, b.first)), frame.x(min(a.last, b.last) + 1)
            y0, y1 = frame.y(base + min(a.end, b.end)), frame.y(base + max(a.offset, b.offset))
            out.append(f'<rect x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{max(y1 - y0, 1):.2f}" '
                       f'fill="#e15759" fill-opacity="0.55" stroke="#b00" stroke-width="1.5">'
                       f'<title>{escape(a.root)} and {escape(b.root)} overlap</title></rect>')
    return out


def _colour(plan: PlanObservation, t) -> str:
    if t.region == "zero_copy" and plan.ge_shaped:
        key = "zero_copy_in" if t.name in plan.graph_inputs else (
            "zero_copy_out" if t.name in plan.graph_outputs else "zero_copy")
        return COLOURS[key][0]
    key = t.region if plan.ge_shaped else _KIND_COLOURS.get(plan.arena(t.region).kind, "fixed")
    palette = COLOURS.get(key, COLOURS["fixed"])
    return palette[int(hashlib.sha1(t.name.encode()).hexdigest(), 16) % len(palette)]


def _tensors(plan: PlanObservation, frame: _Frame) -> list[str]:
    out = []
    for t in sorted(plan.tensors, key=lambda t: t.alias_of is not None):
        if t.region not in frame.bases:
            continue
        base = frame.bases[t.region]
        x0, x1 = frame.x(t.first), frame.x(t.last + 1)
        y0, y1 = frame.y(base + t.offset + max(t.size, 1)), frame.y(base + t.offset)
        h = max(y1 - y0, 0.8)  # keep tiny tensors visible
        tip = (f"{t.name}: {t.region}+{t.offset}, {t.size} bytes (aligned {t.aligned_size}), steps {t.first}..{t.last}"
               + (f", alias of {t.alias_of}" if t.alias_of else "") + f", block {t.block}")
        style = ('fill="none" stroke="#222" stroke-dasharray="3,2" stroke-width="1"' if t.alias_of else
                 f'fill="{_colour(plan, t)}" stroke="white" stroke-width="0.4"')
        out.append(f'<rect x="{x0:.2f}" y="{y1 - h:.2f}" width="{max(x1 - x0, 0.8):.2f}" height="{h:.2f}" {style}>'
                   f'<title>{escape(tip)}</title></rect>')
        if len(plan.tensors) <= 24 and h >= 12 and x1 - x0 >= 28:  # label small plans in place
            out.append(f'<text x="{x0 + 3:.2f}" y="{y1 - h / 2 + 4:.2f}" fill="{"#222" if t.alias_of else "white"}">'
                       f'{escape(t.name)}</text>')
    return out


def _ticks(top: int, n: int = 6) -> list[int]:
    raw = max(top // n, 1)
    mag = 10 ** (len(str(raw)) - 1)
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=raw)
    if top >= 2048:  # byte sizes read better on powers of two
        step = 1 << max((raw - 1).bit_length(), 9)
    return list(range(0, top + 1, step))


def _axes(frame: _Frame) -> list[str]:
    L, T, B = frame.LEFT, frame.TOP, frame.TOP + frame.ph
    out = [f'<line x1="{L}" y1="{B}" x2="{L + frame.pw}" y2="{B}" stroke="#333"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{B}" stroke="#333"/>']
    for a in _ticks(frame.total):
        y = frame.y(a)
        out.append(f'<line x1="{L - 4}" y1="{y:.2f}" x2="{L}" y2="{y:.2f}" stroke="#333"/>'
                   f'<text x="{L - 6}" y="{y + 4:.2f}" text-anchor="end">{_bytes(a)}</text>')
    for s in _ticks(frame.steps):
        x = frame.x(s)
        out.append(f'<line x1="{x:.2f}" y1="{B}" x2="{x:.2f}" y2="{B + 4}" stroke="#333"/>'
                   f'<text x="{x:.2f}" y="{B + 16}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{L + frame.pw / 2}" y="{frame.height - 8}" text-anchor="middle">'
               f'step (index into order; a tensor spans first..last)</text>')
    out.append(f'<text transform="translate(14 {T + frame.ph / 2}) rotate(-90)" text-anchor="middle">'
               f'address in model memory (bytes)</text>')
    return out


def _legend(frame: _Frame, legend=LEGEND) -> list[str]:
    x, y = frame.LEFT + frame.pw + 6, frame.TOP + 4
    out = [f'<text x="{x}" y="{y}" font-weight="bold">legend</text>']
    for i, (key, label) in enumerate(legend):
        yy = y + 10 + 16 * i
        out.append(f'<rect x="{x}" y="{yy}" width="12" height="10" fill="{COLOURS[key][0]}"/>'
                   f'<text x="{x + 16}" y="{yy + 9}">{label}</text>')
    yy = y + 10 + 16 * len(legend)
    out.append(f'<rect x="{x}" y="{yy}" width="12" height="10" fill="none" stroke="#222" stroke-dasharray="3,2"/>'
               f'<text x="{x + 16}" y="{yy + 9}">alias (view / in-place)</text>')
    return out


def _bytes(n: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"
