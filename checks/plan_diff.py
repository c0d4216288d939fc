"""Two plans of one program compared: what a new compiler version or flag changed in its memory plan.

The plans come from any planner in the plan format (docs/plan-format.md): two ``zcspec import -o``
files of one program made by two compiler versions, say. The diff reports, from the plans alone:

- per arena: its size and the lower bound the spec computes (the peak of live bytes) in each plan;
  the reused memory in all (the activation arenas' sizes summed) is the figure a regression is
  judged by;
- per tensor (matched by name): the bytes it owns (its size when it owns memory, 0 when it is an
  alias of another), so an extra temporary, or an output that no longer shares a donated input's
  bytes, shows as memory gained;
- aliases (``alias_of``, to the family's root) and in-place steps gained and lost;
- every claim whose verdict changed (held, violated, not judged, not exercised).

A **regression** is reused memory grown by more than ``threshold`` (a fraction of the old size), or
a claim that held (or was not exercised) in the old plan and is violated in the new one.
"""
from __future__ import annotations

import attrs

from zcspec.checks.foreign.plan_report import PlanReport, plan_report
from zcspec.spec.invariants.layout_bound import activation_arenas, arena_peak
from zcspec.spec.observables.plan import PlanObservation


@attrs.frozen
class ArenaChange:
    name: str
    kind: str
    old: int | None           # bytes; None: the arena is not in that plan
    new: int | None
    old_lower_bound: int | None
    new_lower_bound: int | None


@attrs.frozen
class TensorChange:
    """A tensor whose owned bytes differ: ``old``/``new`` are the bytes it owns in each plan (0: an alias
    of another tensor), None where the plan has no tensor of that name."""

    name: str
    old: int | None
    new: int | None

    @property
    def delta(self) -> int:
        return (self.new or 0) - (self.old or 0)


@attrs.frozen
class PlanDiff:
    old_title: str
    new_title: str
    old_reused: int           # the activation arenas' bytes, summed
    new_reused: int
    arenas: tuple[ArenaChange, ...]
    tensors: tuple[TensorChange, ...]            # largest change first
    aliases_gained: tuple[tuple[str, str], ...]  # (tensor, root)
    aliases_lost: tuple[tuple[str, str], ...]
    in_place_gained: tuple[tuple[str, str], ...]  # (node, tensor)
    in_place_lost: tuple[tuple[str, str], ...]
    claims: tuple[tuple[str, str, str], ...]     # (claim, old verdict, new verdict), changed only
    only_old: int             # tensors of one plan that the other has no tensor of that name for
    only_new: int
    threshold: float

    @property
    def growth(self) -> float | None:
        """The new reused memory over the old (None when the old plan reuses none)."""
        return self.new_reused / self.old_reused if self.old_reused else None

    @property
    def regressions(self) -> tuple[str, ...]:
        out = []
        if self.new_reused > self.old_reused * (1 + self.threshold):
            out.append(f"reused memory grew from {self.old_reused:,} to {self.new_reused:,} bytes "
                       f"({_ratio(self.growth)}), more than the threshold {self.threshold:g}")
        out += [f"{claim} was {old} and is violated now" for claim, old, new in self.claims
                if new == "violated" and old != "violated"]
        return tuple(out)

    @property
    def ok(self) -> bool:
        return not self.regressions

    def lines(self, most: int = 20) -> list[str]:
        out = [f"old: {self.old_title}", f"new: {self.new_title}",
               f"reused memory: {self.old_reused:,} -> {self.new_reused:,} bytes ({_ratio(self.growth)})",
               f"  {'arena':<24} {'kind':<12} {'old':>12} {'new':>12} {'old bound':>12} {'new bound':>12}"]
        out += [f"  {a.name:<24} {a.kind:<12} {_num(a.old):>12} {_num(a.new):>12} {_num(a.old_lower_bound):>12} "
                f"{_num(a.new_lower_bound):>12}" for a in self.arenas]
        if self.tensors:
            out.append(f"tensors whose owned bytes changed: {len(self.tensors)} (largest first)")
            out += [f"  {t.name}: {_num(t.old)} -> {_num(t.new)} ({t.delta:+,})" for t in self.tensors[:most]]
            if len(self.tensors) > most:
                out.append(f"  ... and {len(self.tensors) - most} more")
        for label, pairs, sep in (("aliases gained", self.aliases_gained, " -> "),
                                  ("aliases lost", self.aliases_lost, " -> "),
                                  ("in-place steps gained", self.in_place_gained, " computes "),
                                  ("in-place steps lost", self.in_place_lost, " computes ")):
            if pairs:
                out.append(f"{label}: {len(pairs)}")
                out += [f"  {a}{sep}{b}" for a, b in pairs[:most]]
        if self.only_old or self.only_new:
            out.append(f"tensors in one plan only (matched by name): {self.only_old} old, {self.only_new} new")
        out += [f"claim {claim}: {old} -> {new}" for claim, old, new in self.claims]
        out.append("REGRESSION: " + "; ".join(self.regressions) if self.regressions else "no regression")
        return out

    def to_dict(self) -> dict:
        return {**attrs.asdict(self, recurse=True), "growth": self.growth, "regressions": list(self.regressions),
                "ok": self.ok}


def diff_plans(old: PlanObservation, new: PlanObservation, *, old_title: str = "old", new_title: str = "new",
               threshold: float = 0.0) -> PlanDiff:
    """Compare two plans of one program (module doc); ``threshold``: the fraction reused memory may grow by."""
    if threshold < 0:
        raise ValueError(f"threshold={threshold!r} must be at least 0 (a fraction of the old reused memory)")
    reports = (plan_report(old, compact=False), plan_report(new, compact=False))
    owned = (_owned(old), _owned(new))
    names = sorted(set(owned[0]) | set(owned[1]))
    tensors = [TensorChange(n, owned[0].get(n), owned[1].get(n)) for n in names
               if n in owned[0] and n in owned[1] and owned[0][n] != owned[1][n]]
    tensors += [TensorChange(n, owned[0].get(n), owned[1].get(n)) for n in names
                if (n in owned[0]) != (n in owned[1]) and (owned[0].get(n) or owned[1].get(n))]
    aliases, in_place = (_aliases(old), _aliases(new)), (_in_place(old), _in_place(new))
    return PlanDiff(old_title, new_title, _reused(old), _reused(new), _arenas(old, new),
                    tuple(sorted(tensors, key=lambda t: (-abs(t.delta), t.name))),
                    tuple(sorted(aliases[1] - aliases[0])), tuple(sorted(aliases[0] - aliases[1])),
                    tuple(sorted(in_place[1] - in_place[0])), tuple(sorted(in_place[0] - in_place[1])),
                    _claims(*reports), len(set(owned[0]) - set(owned[1])), len(set(owned[1]) - set(owned[0])),
                    threshold)


def _reused(plan: PlanObservation) -> int:
    return sum(plan.regions.get(r, 0) for r in activation_arenas(plan))


def _arenas(old: PlanObservation, new: PlanObservation) -> tuple[ArenaChange, ...]:
    rows = []
    for name in sorted(set(old.regions) | set(new.regions)):
        arena = new.arena(name) or old.arena(name)
        bounds = [arena_peak(p, name) if name in p.regions and name in activation_arenas(p) else None
                  for p in (old, new)]
        rows.append(ArenaChange(name, getattr(arena, "kind", "?"), old.regions.get(name), new.regions.get(name),
                                *bounds))
    return tuple(rows)


def _owned(plan: PlanObservation) -> dict[str, int]:
    """Tensor name -> the bytes it owns (0 for an alias: its root owns them)."""
    return {t.name: (t.size if t.alias_of is None else 0) for t in plan.tensors}


def _aliases(plan: PlanObservation) -> set[tuple[str, str]]:
    return {(t.name, plan.root(t.name)) for t in plan.tensors if t.alias_of is not None}


def _in_place(plan: PlanObservation) -> set[tuple[str, str]]:
    return {(plan.order[s.step], s.tensor) for s in plan.in_place}


def _claims(old: PlanReport, new: PlanReport) -> tuple[tuple[str, str, str], ...]:
    claims = list(dict.fromkeys(old.applied + new.applied))
    states = [(c, _state(old, c), _state(new, c)) for c in claims]
    return tuple(s for s in states if s[1] != s[2])


def _state(report: PlanReport, claim: str) -> str:
    return report.claim_state(claim) if claim in report.applied else "does not apply"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}x"


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
