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

    @property
    def ratio(self) -> float | None:
        """The arena over its lower bound (None when the bound is 0)."""
        return self.size / self.lower_bound if self.lower_bound else None


@attrs.frozen
class PlanReport:
    """What ``zcspec check`` prints: the spec's report and one row per activation arena."""

    title: str
    plan: PlanObservation = attrs.field(repr=False)
    report: Report
    arenas: tuple[ArenaRow, ...]
    max_ratio: float | None = None   # the quality gate: an arena above it fails the report

    @property
    def over_ratio(self) -> tuple[ArenaRow, ...]:
        """The activation arenas above ``max_ratio`` x their lower bound."""
        if self.max_ratio is None:
            return ()
        return tuple(a for a in self.arenas if a.ratio is not None and a.ratio > self.max_ratio)

    @property
    def ok(self) -> bool:
        return self.report.ok and not self.over_ratio

    @property
    def violations(self):
        return self.report.violations

    @property
    def applied(self) -> tuple[str, ...]:
        return self.report.applied

    @property
    def exercised(self) -> tuple[str, ...]:
        return self.report.exercised

    @property
    def not_judged(self) -> dict[str, str]:
        return self.report.not_judged

    def claim_state(self, claim: str) -> str:
        """``violated``, ``not judged``, ``held`` (exercised) or ``not exercised`` (nothing to test)."""
        if claim in self.report.violated():
            return "violated"
        if claim in self.report.not_judged:
            return "not judged"
        return "held" if claim in self.report.exercised else "not exercised"

    def to_dict(self) -> dict:
        """The report as JSON data (``zcspec check --json``, one object per plan)."""
        r = self.report
        return {"plan": self.title, "ok": self.ok,
                "claims": {c: self.claim_state(c) for c in r.applied},
                "not_judged": dict(r.not_judged),
                "violations": [{"claim": v.invariant_id, "culprit": v.culprit, "message": v.message,
                                "values": {k: str(x) for k, x in v.values.items()}} for v in r.violations],
                "arenas": [{**attrs.asdict(a), "ratio": a.ratio} for a in self.arenas],
                "max_ratio": self.max_ratio, "over_ratio": [a.name for a in self.over_ratio]}

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def lines(self) -> list[str]:
        p, r = self.plan, self.report
        out = [f"{self.title}: {len(p.tensors)} tensors in {len(p.regions)} arena(s), {len(p.order)} steps",
               f"  claims: {len(r.applied)} applied, {len(r.exercised)} exercised, {len(r.violations)} violation(s)"]
        out += [f"  {v}" for v in r.violations]
        out += [f"  not judged: {claim}: {why}" for claim, why in r.not_judged.items()]
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
        out += [f"  QUALITY: arena {a.name!r} is {a.size:,} bytes, {a.ratio:.3f}x its lower bound {a.lower_bound:,}, "
                f"above --max-ratio {self.max_ratio}" for a in self.over_ratio]
        return out


def plan_report(plan: PlanObservation, *, title: str = "plan", compact: bool = True,
                compact_seconds: float | None = COMPACT_SECONDS, invariants=None,
                max_ratio: float | None = None) -> PlanReport:
    """Check ``plan`` (by ``invariants``, default every claim) and measure each activation arena (see the
    module doc); ``compact=False`` skips the packer (the rows then have no compact arena); ``max_ratio``
    fails the report for an arena above it times its lower bound."""
    report = check(plan, invariants=invariants)
    rows = []
    for name in activation_arenas(plan):
        rows.append(_arena_row(plan, name, compact_seconds if compact else -1))
    return PlanReport(title, plan, report, tuple(rows), max_ratio)


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
