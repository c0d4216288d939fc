"""The one translation of a layout into logic: SMT-LIB 2 text, built in bulk.

The query is the *negation* of the layout claim, so ``unsat`` means proved:

    assumptions(bases) and (some claim is broken)

Variables: one integer ``b<k>`` per allocation (its base address). Each tensor
address is a macro ``t<i> = b<alloc> + rel`` (``define-fun``), so the text stays
linear in the number of tensors and pairs.

Assumptions, for every allocation A of size S and base alignment G, and every
two allocations A, B (what the runtime ensures: GE's davinci_model.cc
``InitFeatureMapAndP2PMem`` gives the model regions their own memory and ``CheckUserAndModelSize``
checks the user buffers; buffers not
overlapping each other or the model is the caller's contract):
    G <= b_A,  b_A mod G = 0,  b_A + S <= 2**64,
    b_A + S_A <= b_B  or  b_B + S_B <= b_A.

Broken claims (a disjunction; the claims mirror :mod:`zcspec.checks.proofs.sweep`):
    overlap     t_i < t_j + e_j and t_j < t_i + e_i   for each chosen pair of
                tensors alive together (checks.proofs.pairs: witness pairs by default)
    bounds      t_i < b_A  or  b_A + S_A < t_i + e_i     (non-empty tensors)
    alignment   t_i mod a_i != 0                          (tensors owning memory; one per
                allocation, alignment and offset residue: the others are the same term)
    alias       t_i < t_r  or  t_r + e_r < t_i + e_i      (non-empty alias i of root r)

Building the formula one term at a time through z3's Python API costs about
200 us a pair; text parsed in one call is several times cheaper
(measured with z3-solver on 1,000 and 10,000 blocks).
"""
from __future__ import annotations

import attrs

from zcspec.checks.proofs.layout import ADDRESS_SPACE, Layout, Placement


@attrs.frozen
class Query:
    """The SMT-LIB text and how to read a model of it back."""

    text: str
    base_names: tuple[tuple[str, str], ...]   # (allocation key, SMT constant)
    pairs_encoded: int
    claims_encoded: int                       # all disjuncts: pairs + single-tensor claims


def _base_decls(layout: Layout) -> tuple[list[str], dict[str, str]]:
    lines, names = [], {}
    allocs = layout.allocations
    for k, a in enumerate(allocs):
        names[a.key] = b = f"b{k}"
        lines.append(f"(declare-const {b} Int)")
        lines.append(f"(assert (and (<= {a.base_align} {b}) (= (mod {b} {a.base_align}) 0) "
                     f"(<= (+ {b} {a.size}) {ADDRESS_SPACE})))")
    for i, a in enumerate(allocs):
        for c in allocs[i + 1:]:
            ba, bc = names[a.key], names[c.key]
            lines.append(f"(assert (or (<= (+ {ba} {a.size}) {bc}) (<= (+ {bc} {c.size}) {ba})))")
    return lines, names


def _single_claims(layout: Layout, names: dict[str, str], tid: dict[str, str]) -> list[str]:
    sizes = {a.key: a.size for a in layout.allocations}
    by_name = layout.by_name()
    out, residues = [], set()
    for t in layout.tensors:
        a, b = tid[t.name], names[t.alloc]
        if t.extent:
            out.append(f"(or (< {a} {b}) (< (+ {b} {sizes[t.alloc]}) (+ {a} {t.extent})))")
        if t.align > 1 and (t.alloc, t.align, t.rel % t.align) not in residues:
            residues.add((t.alloc, t.align, t.rel % t.align))
            out.append(f"(not (= (mod {a} {t.align}) 0))")
        if t.alias_of is not None and t.extent:
            r = by_name[t.root]
            out.append(f"(or (< {a} {tid[r.name]}) (< (+ {tid[r.name]} {r.extent}) (+ {a} {t.extent})))")
    return out


def _ground_disjoint(a: Placement, b: Placement) -> bool:
    """True when the pair's overlap term is false whatever the bases: both share
    one base, which cancels, and their offset ranges are disjoint."""
    return a.alloc == b.alloc and (a.rel + a.extent <= b.rel or b.rel + b.extent <= a.rel)


def build_query(layout: Layout, pairs: list[tuple[Placement, Placement]], *, fold: bool = False) -> Query:
    """The SMT-LIB text of "assumptions and some claim of ``layout`` is broken"
    over the chosen ``pairs`` (:func:`zcspec.checks.proofs.pairs.witness_pairs`, or every
    lifetime-overlapping pair from :func:`zcspec.checks.proofs.sweep.conflict_pairs`).

    ``fold``: drop the overlap terms of same-allocation pairs that are false for
    any base (substituting the constants in Python instead of letting Z3's
    simplifier cancel the base). Faster, but then Z3 no longer checks those
    pairs itself, so the default keeps every term (docs/proofs.md has the figures).
    """
    if fold:
        pairs = [(a, b) for a, b in pairs if not _ground_disjoint(a, b)]
    lines, names = _base_decls(layout)
    tid = {t.name: f"t{i}" for i, t in enumerate(layout.tensors)}
    lines += [f"(define-fun {tid[t.name]} () Int (+ {names[t.alloc]} {t.rel}))" for t in layout.tensors]
    claims = _single_claims(layout, names, tid)
    # Each overlap term is one line of the disjunction; f-strings in one
    # comprehension are the cheap way to emit 100k+ of them.
    overlap = [f"(and (< {tid[a.name]} (+ {tid[b.name]} {b.extent})) (< {tid[b.name]} (+ {tid[a.name]} {a.extent})))"
               for a, b in pairs]
    body = "\n".join(claims + overlap)
    lines.append(f"(assert (or false\n{body}))")
    return Query("\n".join(lines), tuple(names.items()), len(pairs), len(claims) + len(overlap))
