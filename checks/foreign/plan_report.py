"""Judge a plan of any planner: every applicable claim, and each reused arena against two yardsticks.

For each arena of kind ``activations`` the report gives its size, the lower bound the spec computes
from the plan (the peak of live bytes, ``arena_peak``) and the arena the ``compact`` strategy's packer
finds for the same buffers (each alias family one buffer: its bytes and the hull of its lifetimes,
at the arena's alignment). The packer does not know exclusive branches, so where a plan has them
the compact arena is for the plan with every branch live (an upper yardstick, said so).
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.memory.packing import Buffer, pack
from zcspec.spec.check import Report, check
from zcspec.spec.invariants._util import families
from zcspec.spec.invariants.layout_bound import activation_arenas, arena_peak
from zcspec.spec.observables.plan import PlanObservation

# The packer's budget per arena: None keeps its fixed, deterministic budgets (the same plan gives the
# same compact arena on every machine, so the report's figures can be rerun).
COMPACT_SECONDS: float | None = None


@attrs.frozen
class ArenaRow:
    name: str
    size: int
    lower_bound: int
    compact: int | None      # None: no buffer with bytes, nothing to pack
    compact_optimal: bool
    buffers: int


@attrs.frozen
class PlanReport:
    """What ``zcspec check`` prints: the spec's report and one row per activation arena."""

    title: str
    plan: PlanObservation = attrs.field(repr=False)
    report: Report
    arenas: tuple[ArenaRow, ...]

    @property
    def ok(self) -> bool:
        return self.report.ok

    def lines(self) -> list[str]:
        p, r = self.plan, self.report
        out = [f"{self.title}: {len(p.tensors)} tensors in {len(p.regions)} arena(s), {len(p.order)} steps",
               f"  claims: {len(r.applied)} applied, {len(r.exercised)} exercised, {len(r.violations)} violation(s)"]
        out += [f"  {v}" for v in r.violations]
        if self.arenas:
            out.append(f"  {'arena':<24} {'size':>12} {'lower bound':>12} {'ratio':>7} {'compact':>12}")
        for a in self.arenas:
            ratio = f"{a.size / a.lower_bound:.3f}" if a.lower_bound else "-"
            compact = "-" if a.compact is None else f"{a.compact:,}{'*' if a.compact_optimal else ''}"
            out.append(f"  {a.name:<24} {a.size:>12,} {a.lower_bound:>12,} {ratio:>7} {compact:>12}")
        if any(a.compact_optimal for a in self.arenas):
            out.append("  (* the compact arena is proved optimal for these buffers)")
        if p.exclusive_groups or p.batch_labels:
            out.append("  (compact packs every branch as live together: it does not know exclusive branches)")
        return out


def plan_report(plan: PlanObservation, *, title: str = "plan", compact: bool = True,
                compact_seconds: float | None = COMPACT_SECONDS) -> PlanReport:
    """Check ``plan`` and measure each activation arena (see the module doc); ``compact=False`` skips
    the packer (the rows then have no compact arena)."""
    report = check(plan)
    rows = []
    for name in activation_arenas(plan):
        rows.append(_arena_row(plan, name, compact_seconds if compact else -1))
    return PlanReport(title, plan, report, tuple(rows))


def _arena_row(plan: PlanObservation, name: str, seconds: float | None) -> ArenaRow:
    arena = plan.arena(name)
    align = arena.alignment if not plan.ge_shaped else 1
    buffers = [Buffer(f.root, f.first, f.last + 1, f.end - f.offset, align=align)
               for f in families(plan) if f.region == name and f.end > f.offset]
    size, peak = plan.regions.get(name, 0), arena_peak(plan, name)
    if not buffers or seconds == -1:
        return ArenaRow(name, size, peak, None, False, len(buffers))
    packed = pack(buffers, time_limit=seconds)
    return ArenaRow(name, size, peak, packed.arena, packed.optimal, len(buffers))
