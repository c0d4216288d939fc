"""Proving a plan's layout safe for every placement of its allocations, with Z3.

:func:`prove_layout` asks Z3 whether some placement of the bases (model regions
and user buffers, see :mod:`zcspec.checks.proofs.layout`) allowed by the assumptions
breaks a claim (:mod:`zcspec.checks.proofs.smtlib` has the formula):

- ``unsat``: **proved** for every such placement;
- ``sat``: **refuted**; the model's bases are turned into concrete addresses
  and the broken claims re-evaluated on them, so the result names the
  offending pair (or tensor and allocation) with real addresses (``reason``
  prints the counterexample);
- anything else (timeout, resource limit, ...): **unknown**, with Z3's reason.
  Unknown is never a pass: ``ProofResult.passed`` is true only for proved.
"""
from __future__ import annotations

import time
from typing import Mapping

import attrs
import z3

from zcspec.checks.proofs.layout import Layout, Placement, read_layout
from zcspec.checks.proofs.pairs import witness_pairs
from zcspec.checks.proofs.smtlib import build_query
from zcspec.checks.proofs.sweep import SweepFinding, conflict_pairs

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
_PAIRS = {"witness": witness_pairs, "lifetime": conflict_pairs}


@attrs.frozen
class ProofResult:
    """What Z3 said about a layout, and what it cost."""

    status: str                                    # "proved" | "refuted" | "unknown"
    pair: tuple[str, ...] | None = None            # the offending pair (or tensor, allocation) when refuted
    kind: str | None = None                        # its claim: overlap, out_of_bounds, misaligned, alias_outside_root
    violations: tuple[SweepFinding, ...] = ()         # every claim broken under the counterexample
    bases: tuple[tuple[str, int], ...] = ()        # counterexample base address per allocation
    addresses: tuple[tuple[str, int], ...] = ()    # counterexample address of each offending tensor
    reason: str = ""                               # why Z3 gave up (unknown); the counterexample (refuted)
    pairs_encoded: int = 0
    claims_encoded: int = 0
    build_s: float = 0.0                           # plan -> layout -> sweep -> SMT-LIB text -> parsed
    solve_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PROVED


def _concrete(layout: Layout, pairs: list[tuple[Placement, Placement]], bases: Mapping[str, int]) -> list[SweepFinding]:
    """The claims broken when each allocation sits at ``bases``; the checks are on
    absolute addresses, so this is independent of the sweep's relative reasoning."""
    addr = {t.name: bases[t.alloc] + t.rel for t in layout.tensors}
    size = {a.key: a.size for a in layout.allocations}
    by_name = layout.by_name()
    out = []
    for t in layout.tensors:
        a, base = addr[t.name], bases[t.alloc]
        if t.extent and (a < base or a + t.extent > base + size[t.alloc]):
            out.append(SweepFinding("out_of_bounds", (t.name, t.alloc),
                                 f"tensor {t.name!r} at {a:#x}+{t.extent} leaves {t.alloc!r} at {base:#x}+{size[t.alloc]}"))
        if a % t.align:
            out.append(SweepFinding("misaligned", (t.name,), f"tensor {t.name!r} at {a:#x} is not {t.align}-byte aligned"))
        r = by_name[t.root]
        if t.alias_of is not None and t.extent and not (addr[r.name] <= a and a + t.extent <= addr[r.name] + r.extent):
            out.append(SweepFinding("alias_outside_root", (t.name, r.name),
                                 f"alias {t.name!r} at {a:#x}+{t.extent} is outside root {r.name!r} "
                                 f"at {addr[r.name]:#x}+{r.extent}"))
    for p, q in pairs:
        if addr[p.name] < addr[q.name] + q.extent and addr[q.name] < addr[p.name] + p.extent:
            out.append(SweepFinding("overlap", (p.name, q.name),
                                 f"tensors {p.name!r} at {addr[p.name]:#x}+{p.extent} and {q.name!r} at "
                                 f"{addr[q.name]:#x}+{q.extent} overlap while both alive"))
    return out


def _violated(layout, model: z3.ModelRef, base_names) -> dict:
    bases = {key: model.eval(z3.Int(name), model_completion=True).as_long() for key, name in base_names}
    # Every lifetime-overlapping pair, not only the encoded ones, so the report is complete.
    found = _concrete(layout, conflict_pairs(layout), bases)
    if not found:
        raise RuntimeError("Z3 found a counterexample in which no claim is broken: "
                           "the SMT-LIB translation and the claims disagree (a bug in checks.proofs)")
    first = found[0]
    by_name = layout.by_name()
    addrs = tuple((n, bases[by_name[n].alloc] + by_name[n].rel) for n in first.tensors if n in by_name)
    text = ", ".join(f"{key}={base:#x}" for key, base in bases.items())
    return dict(pair=first.tensors, kind=first.kind, violations=tuple(found),
                bases=tuple(bases.items()), addresses=addrs,
                reason=f"counterexample: bases {text}; {first.message}")


def prove_layout(plan: Mapping, *, block_align: int = 512, user_align: int = 64, tensor_align: int | None = None,
                 zero_copy_align: int | None = None, user_sizes: Mapping | None = None,
                 timeout_ms: int = 60_000, rlimit: int = 0,
                 pairs: str = "witness", fold: bool = False) -> ProofResult:
    """Prove ``plan`` (the JSON contract of docs/plan-format.md) safe for every placement of its bases.

    Alignment and user-buffer options are those of :func:`zcspec.checks.proofs.layout.read_layout`.
    ``timeout_ms`` and ``rlimit`` (Z3's deterministic resource limit, 0 = none) bound
    the solver; hitting either gives status "unknown". ``pairs``: "witness" encodes
    O(N) pairs (:mod:`zcspec.checks.proofs.pairs`), "lifetime" every lifetime-overlapping
    pair, across allocations too (O(P), for comparison). ``fold`` drops the terms of
    same-allocation pairs that are ground-false (see :func:`zcspec.checks.proofs.smtlib.build_query`). Raises PlanFormatError on a
    malformed plan.
    """
    start = time.perf_counter()
    layout = read_layout(plan, block_align=block_align, user_align=user_align, tensor_align=tensor_align,
                         zero_copy_align=zero_copy_align, user_sizes=user_sizes)
    if pairs not in _PAIRS:
        raise ValueError(f"pairs={pairs!r}: expected one of {sorted(_PAIRS)}")
    query = build_query(layout, _PAIRS[pairs](layout), fold=fold)
    solver = z3.Solver()
    solver.set("timeout", int(timeout_ms))
    if rlimit:
        solver.set("rlimit", int(rlimit))
    solver.from_string(query.text)
    built = time.perf_counter()
    answer = solver.check()
    solved = time.perf_counter()
    common = dict(pairs_encoded=query.pairs_encoded, claims_encoded=query.claims_encoded,
                  build_s=built - start, solve_s=solved - built)
    if answer == z3.unsat:
        return ProofResult(PROVED, **common)
    if answer == z3.sat:
        return ProofResult(REFUTED, **_violated(layout, solver.model(), query.base_names), **common)
    return ProofResult(UNKNOWN, reason=solver.reason_unknown() or "unknown", **common)
