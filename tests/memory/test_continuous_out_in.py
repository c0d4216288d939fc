"""A continuous output feeding a continuous input: one block for both sequences (GE's ContinuousMemMng).

GE's ``ContinuousMemMng`` (continuous_mem.cc) chains a fused collective's continuous outputs with the HCCL
continuous inputs they feed into one sequence (the outputs as the inputs' header, tail or middle, and the other
way round), and ``ApplyContinuousMemWithMng`` (block_mem_assigner.cc) gives it one block, each piece at the sum
of the 512-aligned sizes before it. Its conflict checker (``continuous_output_and_continuous_input.cc``,
``IsSameOrPartialSame``) copies the input only where no such sequence exists. zcspec's planner lays the chain
out (continuous_groups.chains) and its conflict pass spares what GE's checker spares; both runtimes run a compiled graph
of the pattern and the oracle agrees.
"""
from __future__ import annotations

import attrs
import pytest
from hypothesis import given, strategies as st

from tests.helpers.plan_check import check_plan
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.impl.compiler.anchor_types import same_or_partial_same
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.memory import continuous_groups, units
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.spec.check import check

N = 100                       # (1, N) float32: 400 bytes, one 512-byte piece
PIECE = 512
F = ((1, N), "float32")
SOURCES = ("Relu", "Abs", "Neg", "Exp", "Sigmoid", "Tanh", "Floor", "Erf", "Gelu")


class _Graph:
    """x -> one unary op per named tensor; fused collectives (continuous outputs) and HCCL continuous inputs
    over them, by name: ``fused("ar", 3)`` makes ar:0..ar:2, ``reads("ar2", "ar:1", "ar:2", "e")`` an
    HcomAllReduce reading those. Unread outputs feed a Neg each, which with the collectives' outputs are
    the graph's outputs."""

    def __init__(self, name: str):
        self.b = GraphBuilder(name)
        self.x = self.b.input("x", (1, N))
        self.t: dict[str, str] = {}
        self.read: set[str] = set()
        self.outs: list[str] = []

    def source(self, name: str) -> str:
        if name not in self.t:
            self.t[name] = self.b.op(SOURCES[len(self.t) % len(SOURCES)], [self.x], name=name)
        return self.t[name]

    def fused(self, name: str, n: int) -> "_Graph":
        ins = [self.source(f"{name}_in{k}") for k in range(n)]
        for k, t in enumerate(self.b.op("HcomAllReduce", ins, name=name, outputs=[F] * n, continuous_output=True)):
            self.t[f"{name}:{k}"] = t
        return self

    def reads(self, name: str, *pieces: str) -> "_Graph":
        ins = [self.t[p] if ":" in p else self.source(p) for p in pieces]
        self.read |= set(pieces)
        self.outs += list(self.b.op("HcomAllReduce", ins, name=name, outputs=[F] * len(ins)))
        return self

    def build(self):
        loose = [t for name, t in self.t.items() if ":" in name and name not in self.read]
        self.b.output(*[self.b.op("Neg", [t], name=f"n_{t.replace(':', '_')}") for t in loose], *self.outs)
        return self.b.build()


def header():
    """GE's BuildContinuousOutInWithOutAsHeader: ar's outputs 1 and 2 are ar2's inputs 0 and 1, then e."""
    return _Graph("out_as_header").fused("ar", 3).reads("ar2", "ar:1", "ar:2", "e").build()


def header_and_tail():
    """BuildContinuousOutInWithInAsHeaderAndTail: ar2 reads a, ar:0, ar:1, e."""
    return _Graph("in_as_header_and_tail").fused("ar", 2).reads("ar2", "a", "ar:0", "ar:1", "e").build()


def two_inputs_inside():
    """BuildContinuousOutInWithTwoContinuousInNode: ar2 and ar3 read runs in the middle of ar's six outputs."""
    return _Graph("two_in_inside").fused("ar", 6).reads("ar2", "ar:1", "ar:2").reads("ar3", "ar:3", "ar:4").build()


def three_chained():
    """BuildContinuousOutInWithThreeNode: in-groups (a, p:0), (p:1, q:0), (q:1, r:0) over three fused outputs."""
    g = _Graph("three").fused("p", 2).fused("q", 2).fused("r", 2)
    return g.reads("c4", "a", "p:0").reads("c5", "p:1", "q:0").reads("c6", "q:1", "r:0").build()


# (graph, the chain in block order, as GE's UtestContinuousMem tests list it for the same graph builders)
LAYOUTS = {
    "header": (header, ("ar:0", "ar:1", "ar:2", "e:0")),
    "header_and_tail": (header_and_tail, ("a:0", "ar:0", "ar:1", "e:0")),
    "two_inputs_inside": (two_inputs_inside, tuple(f"ar:{k}" for k in range(6))),
    "three_chained": (three_chained, ("a:0", "p:0", "p:1", "q:0", "q:1", "r:0", "r:1")),
}


@pytest.mark.parametrize("strategy", ["ge", "compact"])
@pytest.mark.parametrize("case", sorted(LAYOUTS))
def test_the_chain_is_one_block_each_piece_512_aligned_after_the_one_before(case, strategy):
    make, chain = LAYOUTS[case]
    g = make()
    p = plan_memory(g, PlanOptions(strategy=strategy))
    base = p.tensor(chain[0])
    assert [p.tensor(t).offset - base.offset for t in chain] == [k * PIECE for k in range(len(chain))]
    assert {p.tensor(t).block for t in chain} == {base.block} and not any(p.tensor(t).zero_copy for t in chain)
    assert check_plan(g, p) == []
    report = check(observe_plan(g, p))
    assert {"MEM-CONT-INPUT", "MEM-CONT-OUTPUT"} <= set(report.exercised) and report.violations == ()


def test_the_chain_is_never_reused():
    """GE's ContinuousMem of this scenario has can_reuse_ false (no separate clean): no other tensor takes its
    bytes at any step, though the chain's pieces die early."""
    g = header()
    p = plan_memory(g)
    lo = p.tensor("ar:0").offset
    hi = lo + 4 * PIECE
    inside = [t.name for t in p.tensors if t.region == "feature_map" and lo <= t.offset < hi]
    assert sorted(inside) == ["ar:0", "ar:1", "ar:2", "e:0"]


def test_an_atomic_piece_shares_the_chain_block_with_pieces_of_groups_it_is_not_in():
    """e (ReduceSum, atomic) is in ar2's inputs, not in ar's outputs, yet ar:0 shares its block through the
    chain: MEM-ATOMIC-NOREUSE counts the whole chain as the atomic tensor's group."""
    g = _Graph("atomic").fused("ar", 3)
    g.t["e"] = g.b.op("ReduceSum", [g.source("e0")], name="e", shape=(1, N), axes=(0,), keepdims=1)
    g = g.reads("ar2", "ar:1", "ar:2", "e").build()
    p = plan_memory(g)
    assert p.tensor("ar:0").block == p.tensor("e:0").block and p.tensor("e:0").offset - p.tensor("ar:0").offset == 1536
    report = check(observe_plan(g, p))
    assert "MEM-ATOMIC-NOREUSE" in report.exercised and report.violations == ()


def test_the_conflict_pass_spares_what_the_planner_lays_out():
    for make, _ in LAYOUTS.values():
        g = make()
        assert mem_layout_conflict(g) is g, g.name


def _reversed():
    return _Graph("reversed").fused("ar", 2).reads("ar2", "ar:1", "ar:0").build()


def _gap():
    return _Graph("gap").fused("ar", 2).reads("ar2", "ar:0", "e", "ar:1").build()


@pytest.mark.parametrize("make,shared", [(_reversed, "ar:1, ar:0"), (_gap, "ar:0, ar:1")])
def test_another_overlap_is_refused_naming_the_tensors_and_the_pass_copies_every_shared_input(make, shared):
    g = make()
    with pytest.raises(PlanError, match=f"continuous inputs of 'ar2'.*continuous outputs of 'ar'.*share {shared} "
                                        "in an order no one block holds") as e:
        plan_memory(g)
    assert e.value.node == "ar2"
    fixed = mem_layout_conflict(g)
    ar2 = fixed.node["ar2"]
    copied = [t for t in ar2.inputs if fixed.node[fixed.producer[t]].attr("_inserted_by") == "mem_layout_conflict"]
    assert len(copied) == 2
    p = plan_memory(fixed)
    assert check_plan(fixed, p) == [] and check(observe_plan(fixed, p)).violations == ()


def test_a_cycle_of_chains_stays_a_plan_error_as_in_ge():
    """p -> (p:1, q:0) and q -> (q:1, p:0): each pair overlaps as GE's checker allows, so no copy; but no one
    sequence holds all four runs (GE's SaveNodeOutInOrder would save p:0 twice and fail)."""
    g = _Graph("cycle").fused("p", 2).fused("q", 2).reads("c1", "p:1", "q:0").reads("c2", "q:1", "p:0").build()
    assert mem_layout_conflict(g) is g
    with pytest.raises(PlanError, match="share .* in an order no one block holds"):
        plan_memory(g)


@given(st.permutations("abcdefg"), st.integers(1, 5), st.integers(0, 6), st.integers(1, 5), st.booleans())
def test_the_checker_and_the_planner_agree_on_every_overlap(perm, n_out, start, n_in, shuffle):
    """GE's IsSameOrPartialSame spares exactly the pairs continuous_groups.merge joins (sequences of distinct tensors
    sharing one or more)."""
    outs = list(perm[:n_out])
    pool = list(perm[start:start + n_in]) or [perm[0]]
    if shuffle:
        pool = pool[1:] + pool[:1]
    if not set(outs) & set(pool):
        pool.append(outs[0])
    assert same_or_partial_same(outs, pool) == (continuous_groups.merge(outs, pool) is not None)
    assert (continuous_groups.merge(outs, pool) is None) == (continuous_groups.merge(pool, outs) is None)


def _shuffled(real):
    """A planted planner bug: the chain's last two pieces swap places (no overlap, wrong order)."""
    def joint_unit(facts, chain, options):
        u = real(facts, chain, options)
        roots = list(u.roots)
        (a, at), (b, bt) = roots[-2], roots[-1]
        roots[-2:] = [(a, bt), (b, at)]
        return attrs.evolve(u, roots=tuple(roots))
    return joint_unit


def _squeezed(real):
    """A planted planner bug: the pieces are laid 256 bytes apart, so each overlaps the next."""
    def joint_unit(facts, chain, options):
        u = real(facts, chain, options)
        return attrs.evolve(u, roots=tuple((r, k * PIECE // 2) for k, (r, _) in enumerate(u.roots)))
    return joint_unit


def test_a_planted_layout_bug_fails_a_claim(monkeypatch):
    g = header()
    monkeypatch.setattr(units, "_joint_unit", _shuffled(units._joint_unit))
    failed = {v.invariant_id for v in check(observe_plan(g, plan_memory(g))).violations}
    assert {"MEM-CONT-INPUT", "MEM-CONT-OUTPUT"} <= failed, failed


RUNS = {"v1": {"runtime": "v1", "calls": 2}, "v2": {"runtime": "v2"}}


def _executed(runtime: str, graph):
    return evaluate(Scenario("execution", graph, runtime={"runs": [RUNS[runtime]]}))


@pytest.mark.parametrize("runtime", sorted(RUNS))
def test_both_runtimes_run_a_compiled_chain_and_the_oracle_agrees(runtime):
    g = _Graph("run").fused("p", 2).fused("q", 2).reads("c", "a", "p:0", "p:1", "e", "q:0", "q:1", "f").build()
    st_ = compile_stages(g, CompileOptions())
    assert not [n for n in st_.graph.nodes if n.attr("_inserted_by") == "mem_layout_conflict"]
    assert len({st_.plan.tensor(t).block for t in ("a:0", "p:0", "q:1", "f:0")}) == 1
    reports = _executed(runtime, g)
    assert any("EXEC-ORACLE" in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []


def test_the_oracle_refuses_overlapping_pieces_at_run_time_on_v1(monkeypatch):
    """Runtime v1 runs in the plan's arena. Runtime v2 gives each alias group its own memory at run time
    (runtime/v2/groups.py), and the chain's pieces are separate roots, so the plan's offsets never reach it."""
    monkeypatch.setattr(units, "_joint_unit", _squeezed(units._joint_unit))
    assert "EXEC-ORACLE" in {v.invariant_id for r in _executed("v1", header()) for v in r.violations}
