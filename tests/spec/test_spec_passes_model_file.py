"""Pass and model-file invariants: targeted cases beyond the documented examples."""
from __future__ import annotations

import attrs
import pytest

from zcspec.spec.examples.build import GOOD_HEADER, accepted, model_file, node, node_task, soc, task
from zcspec.spec.capabilities import UnknownSocError, capabilities
from zcspec.spec.observables import BuildFacts, SocProfile, ZeroCopyEntry
from zcspec.spec.registry import get

PASS = "PASS-MEMCPY-ADDR-ASYNC"


def _pass_violations(nodes, tasks=(), **kw):
    return get(PASS).violations(model_file(nodes=tuple(nodes), tasks=tuple(tasks), **kw))


def test_memcpy_addr_async_not_required_when_the_soc_cannot_do_it():
    nodes = [node("c", "Const"), node("out", "NetOutput", "c")]
    assert _pass_violations(nodes, soc=soc(False)) == ()
    extra = [node("c", "Const"), node("m", "MemcpyAddrAsync", "c"), node("out", "NetOutput", "m")]
    (v,) = _pass_violations(extra, soc=soc(False))
    assert v.culprit == "node 'm'"  # one where none is required is reported too


_HCCL = [node_task(0, "ar", "hccl")]      # legacy cannot refresh HCCL tasks
_HCCL_OK = [node_task(0, "ar", "hccl")]


@pytest.mark.parametrize("nodes, tasks, soc_name, build, needed", [
    ([node("x", "Data"), node("sm", "StreamMerge", "x")], [], "legacy", BuildFacts(), True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(), False),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(offline=True), True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(single_op=True), True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL, "legacy", BuildFacts(), True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL, "legacy", BuildFacts(feature_base_refreshable=True), False),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL_OK, "ascend910b", BuildFacts(), False),
    ([node("c", "Const"), node("out", "NetOutput", "c")], [], "legacy", BuildFacts(unknown_shape=True), False),
    # The spec's table, not the compiler, says what a SoC refreshes: memset is stuck on ascend310p only.
    ([node("k", "ReduceSum"), node("out", "NetOutput", "k")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend310p", BuildFacts(), True),
    ([node("k", "ReduceSum"), node("out", "NetOutput", "k")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend910b", BuildFacts(), False),
    ([node("x", "Data"), node("k", "ReduceSum", "x")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend310p", BuildFacts(), False),    # a memset touches outputs only, so the input is not stuck
    ([node("x", "Data"), node("k", "Relu", "x")], [node_task(0, "k", in_loop=True)], "legacy", BuildFacts(), True),
    ([node("x", "Data"), node("k", "Relu", "x")], [node_task(0, "k", in_loop=True)], "ascend910b", BuildFacts(), False),
])
def test_memcpy_addr_async_rules(nodes, tasks, soc_name, build, needed):
    """PASS-MEMCPY-ADDR-ASYNC: each insertion rule of ge-facts.md 5.3.4, and the conditions that switch it off."""
    found = _pass_violations(nodes, tasks, soc=SocProfile(soc_name), build=build)
    assert bool(found) == needed


def test_memcpy_addr_async_unknown_soc_is_not_exercised_and_the_table_names_the_known_ones():
    mf = model_file(nodes=(node("c", "Const"), node("out", "NetOutput", "c")), soc=SocProfile("ascend-x"))
    assert get(PASS).violations(mf) == () and not get(PASS).exercised(mf)
    with pytest.raises(UnknownSocError, match="'ascend-x'.*known"):
        capabilities("ascend-x")


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

    view = NodeInfo("flat", "Reshape", ("x",), view=True)
    red = node("red", "ReduceSum", "flat")
    base = [node("x", "Data"), view]
    loop = (node_task(0, "red", in_loop=True),)
    missing = model_file(nodes=(*base, red, node("out", "NetOutput", "red")), tasks=loop, soc=soc(True))
    assert {v.culprit for v in get(PASS).violations(missing)} == {"edge 'x' -> 'red'", "edge 'red' -> 'out'"}
    memset = (node_task(0, "red", roles=("in", "out")), node_task(1, "red", "memset", roles=("out",)))
    copy = node("red_MemcpyAddrAsync_0", "MemcpyAddrAsync", "red")
    fixed = model_file(nodes=(*base, red, copy, node("out", "NetOutput", "red_MemcpyAddrAsync_0")),
                       tasks=memset, soc=SocProfile("ascend310p"))
    assert get(PASS).violations(fixed) == ()
