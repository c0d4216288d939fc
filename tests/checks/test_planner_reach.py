"""verify reaches code of the planner, the alias analysis and the passes it never ran before (coverage of verify,
benchmarks/verify_reach.py): three built-in graphs (checks/zoo.py ``alias_guards``, ``interval_window``,
``batch_collectives``), graph JSON files validate.py and the IR refuse (checks/graph_json_cases.py) and large
packings that reach the hill climb and the squeaky wheel (checks/packing_cases.py). Each passes on the real
code, and a bug planted on a statement only it reaches fails it: through a claim, a refusal that is not the
expected one, or a crash of the compiler."""
from __future__ import annotations

import importlib

import pytest

from zcspec.checks import verify as V
from zcspec.checks import verify_cases as C
from zcspec.checks.packing_cases import LargeCase, check_packing_case, packing_cases
from zcspec.checks.verify_one_case import check_case
from zcspec.checks.zoo import zoo_names
from zcspec.impl.compiler import aliases, validate
from zcspec.impl.compiler.memory import dynamic_batch
from tests.helpers.frontend_cases import run_cases

# the module, not the pass function zcspec.impl.compiler.passes exports under the same name
conflict_pass = importlib.import_module("zcspec.impl.compiler.passes.mem_layout_conflict")
NEW = ("builtin:alias_guards", "builtin:interval_window", "builtin:batch_collectives")


def _failing(model: str, kinds=("plan", "model_file", "execution")) -> list[str]:
    """The claims violated and the errors of ``model``'s zoo cases (only its own, not verify's fixed runs)."""
    result = V.VerifyResult()
    for case, scenario in C.zoo_cases(V.VerifyConfig(models=(model,), kinds=kinds)):
        if case.startswith(model):
            check_case(result, case, scenario, prove=False)
    return ([f"{f.case}: {f.violation.invariant_id}" for f in result.findings]
            + [f"{c}: {why}" for c, why in result.errors])


def test_the_new_graphs_are_in_verifys_default_run():
    assert set(NEW) <= set(zoo_names())


@pytest.mark.parametrize("model", NEW)
def test_the_new_graphs_pass(model):
    assert not _failing(model)


def test_a_ref_that_overwrites_a_weight_faults(monkeypatch):
    """aliases._fixed_root forgetting weights: the in-place Mul writes the read-only weight memory."""
    real = aliases._fixed_root
    monkeypatch.setattr(aliases, "_fixed_root", lambda graph, root: root not in graph.weight and real(graph, root))
    assert any("EXEC-NO-FAULT" in f for f in _failing("builtin:alias_guards", ("execution",)))


def test_a_ref_that_ignores_a_reader_on_another_stream_races(monkeypatch):
    """aliases._readers_done always true: the in-place Abs overwrites ``a`` while stream 1 may still read it."""
    monkeypatch.setattr(aliases, "_readers_done", lambda *args: True)
    failing = _failing("builtin:alias_guards", ("execution",))
    assert any("EXEC-NO-RACE" in f for f in failing) and any("EXEC-TENSOR-INTACT" in f for f in failing)


def test_conflict_copies_that_ignore_names_in_use_collide(monkeypatch):
    """_Names.copy taking its first name without looking: the copy's name is the Split's."""
    def copy(self, graph, tensor, consumer, index):
        self.taken = set()
        return real(self, graph, tensor, consumer, index)
    real = conflict_pass._Names.copy
    monkeypatch.setattr(conflict_pass._Names, "copy", copy)
    assert any("DuplicateNameError" in f for f in _failing("builtin:alias_guards", ("plan",)))


def test_batch_wrappers_without_their_batch_children_fail(monkeypatch):
    """_wrap_all leaving the smaller branch's wrapper out of the largest one's batch children: its block is
    never laid out."""
    real = dynamic_batch._wrap_all

    def wrap_all(by_label, next_id, options, memo):
        out = real(by_label, next_id, options, memo)
        for w in out:
            w.batch_children.clear()
        return out
    monkeypatch.setattr(dynamic_batch, "_wrap_all", wrap_all)
    assert _failing("builtin:batch_collectives", ("plan",))


def test_validation_without_the_self_control_edge_rule_is_caught(monkeypatch):
    """A control edge from the node itself is then refused as a cycle, whose message does not say so."""
    real = validate._control_inputs_valid
    monkeypatch.setattr(validate, "_control_inputs_valid", lambda graph: None)
    outcome = run_cases(monkeypatch, "graph_json_control_input_self")
    assert "does not name from itself" in outcome.caught("graph_json_control_input_self")
    monkeypatch.setattr(validate, "_control_inputs_valid", real)
    assert not run_cases(monkeypatch, "graph_json_control_input_self").caught("graph_json_control_input_self")


def test_the_new_graph_json_refusals_pass(monkeypatch):
    names = ("graph_json_control_input_self", "graph_json_attr_null", "graph_json_attr_nested_tuple",
             "graph_json_reuse_input_index", "graph_json_inplace_ability_odd", "graph_json_continuous_output_int",
             "graph_json_gentask_atomic_text", "graph_json_atomic_input_index_int")
    outcome = run_cases(monkeypatch, *names)
    assert not outcome.errors and not outcome.findings


def test_the_descent_copies_pack_within_their_judgement():
    cases = [c for c in packing_cases(0) if c.label.startswith("descent x")]
    assert len(cases) == 2 and all(isinstance(c, LargeCase) for c in cases)
    for case in cases:
        assert not check_packing_case(case)
