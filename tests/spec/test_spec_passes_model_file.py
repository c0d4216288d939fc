"""Pass and model-file invariants: targeted cases beyond the documented examples."""
from __future__ import annotations

import attrs
import pytest

from zcspec.spec.examples.build import GOOD_HEADER, accepted, model_file, node, soc, task
from zcspec.spec.observables import BuildFacts, ZeroCopyEntry
from zcspec.spec.registry import get

PASS = "PASS-MEMCPY-ADDR-ASYNC"


def _pass_violations(nodes, **kw):
    return get(PASS).violations(model_file(nodes=tuple(nodes), **kw))


def test_memcpy_addr_async_not_required_when_the_soc_cannot_do_it():
    nodes = [node("c", "Const"), node("out", "NetOutput", "c")]
    assert _pass_violations(nodes, soc=soc(False)) == ()
    extra = [node("c", "Const"), node("m", "MemcpyAddrAsync", "c"), node("out", "NetOutput", "m")]
    (v,) = _pass_violations(extra, soc=soc(False))
    assert v.culprit == "node 'm'"  # one where none is required is reported too


@pytest.mark.parametrize("nodes, build, needed", [
    ([node("x", "Data"), node("sm", "StreamMerge", "x")], BuildFacts(), True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], BuildFacts(), False),
    ([node("x", "Data"), node("out", "NetOutput", "x")], BuildFacts(offline=True), True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], BuildFacts(single_op=True), True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r", refresh=False)], BuildFacts(), True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r", refresh=False)], BuildFacts(feature_base_refreshable=True), False),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r", refresh=True)], BuildFacts(), False),
    ([node("c", "Const"), node("out", "NetOutput", "c")], BuildFacts(unknown_shape=True), False),
])
def test_memcpy_addr_async_rules(nodes, build, needed):
    """PASS-MEMCPY-ADDR-ASYNC: each insertion rule of ge-facts.md 5.3.4, and the conditions that switch it off."""
    found = _pass_violations(nodes, soc=soc(True), build=build)
    assert bool(found) == needed


def test_well_formed_rejections_are_fine_and_every_problem_is_named():
    bad = attrs.evolve(GOOD_HEADER, magic="ONNX", version=7, actual_length=10)
    assert get("MF-WELL-FORMED").violations(model_file(header=bad, load=accepted(False))) == ()
    (v,) = get("MF-WELL-FORMED").violations(model_file(header=bad, load=accepted(True)))
    assert len(v.values["problems"]) == 3 and "magic='ONNX'" in v.message


def test_slot_in_region_unknown_region_and_dangling_zero_copy_entry():
    mf = model_file(regions={"feature_map": 1024}, tasks=(task(0, ("weight", 0, 4)),),
                    zero_copy_table=(ZeroCopyEntry(0, 3, "x", "input"),))
    culprits = {v.culprit for v in get("MF-SLOT-IN-REGION").violations(mf)}
    assert culprits == {"task 0 slot 0", "task 0 slot 3"}


def test_memcpy_addr_async_soc_refresh_rules_look_through_views():
    from zcspec.spec.check import check
    from zcspec.spec.examples.build import model_file, node, soc
    from zcspec.spec.observables.model_file import NodeInfo

    view = NodeInfo("flat", "Reshape", ("x",), view=True, has_task=False)
    stuck = node("red", "ReduceSum", "flat", refresh=False)
    base = [node("x", "Data"), view]
    missing = model_file(nodes=(*base, stuck, node("out", "NetOutput", "red")), soc=soc(True))
    assert {v.culprit for v in check(missing).violations} == {"edge 'x' -> 'red'", "edge 'red' -> 'out'"}
    memset_only = NodeInfo("red", "ReduceSum", ("flat",), supports_addr_refresh=False, supports_input_refresh=True)
    copy = node("red_MemcpyAddrAsync_0", "MemcpyAddrAsync", "red")
    fixed = model_file(nodes=(*base, memset_only, copy, node("out", "NetOutput", "red_MemcpyAddrAsync_0")), soc=soc(True))
    assert check(fixed).ok
