"""Every claim reaches the non-vacuity floor on verify's fixed cases alone (issue 13).

The random campaign's draws change whenever a strategy or a scenario changes: a claim that reached
``MIN_DISTINCT`` distinct cases only through them fell below the floor on correct code once
(V2-TRUST-SHAPE at 1e87b07) and made the default ``zcspec verify`` fail. So the zoo, the built-in
graphs and verify's fixed runs must put every claim to the test by themselves.
"""
from __future__ import annotations

from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.verify_result import MIN_DISTINCT
from zcspec.checks.zoo import load, zoo_names
from zcspec.spec.registry import all_invariants, ids

FIXED_ONLY = VerifyConfig(models=zoo_names(), examples=0, proofs=False, corpus=False, onnx_node_tests=False)
# The input-file claims judge the front end's crafted files, which FIXED_ONLY leaves out with the ONNX node
# tests they run beside: tests/checks/test_frontend_cases.py holds them to the floor on those files alone.
INPUT_FILE_CLAIMS = {inv.id for inv in all_invariants() if inv.applies_to == "input_file"}


def test_every_claim_reaches_the_floor_without_the_campaign():
    result = verify(FIXED_ONLY)
    assert not result.failing(), (result.findings[:3], result.errors[:3], result.failed_calls[:3])
    thin = {i: result.tally.distinct_count(i) for i in result.below_floor(sorted(set(ids()) - INPUT_FILE_CLAIMS))}
    assert not thin, f"below {MIN_DISTINCT} distinct cases without the random campaign: {thin}"


def test_the_sized_inputs_graph_has_what_its_claims_need():
    """Three inputs of three sizes declared out of order, workspaces on both streams."""
    g = load("builtin:sized_inputs")
    sizes = [g.desc[i].nbytes for i in g.inputs]
    assert len(set(sizes)) == 3 and sizes != sorted(sizes) and sizes != sorted(sizes, reverse=True)
    declaring = [n for n in g.nodes if n.attr("_workspace_bytes", ())]
    assert {n.stream for n in declaring} == {0, 1} and max(len(n.attr("_workspace_bytes")) for n in declaring) == 2


def test_the_inplace_pairs_graph_puts_each_in_place_rule_to_the_test():
    """A ref on input 1, an optional pair refused on a graph input and taken on input 1, and one refused for
    its input's size: the plan shows exactly those aliases."""
    from zcspec.impl.compiler.memory.plan import plan_memory

    g = load("builtin:inplace_pairs")
    plan = plan_memory(g)
    aliased = {t.name: t.alias_of for t in plan.tensors if t.alias_of}
    by_op = {n.op_type: n for n in g.nodes}
    sub, add, mul = (by_op[k].outputs[0] for k in ("Sub", "Add", "Mul"))
    assert aliased == {sub: by_op["Sub"].inputs[1], add: by_op["Add"].inputs[1]}, aliased
    assert g.desc[by_op["Mul"].inputs[0]].nbytes != g.desc[mul].nbytes and by_op["Mul"].attr("_inplace_ability")
