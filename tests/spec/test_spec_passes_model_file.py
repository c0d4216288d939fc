"""Pass and model-file invariants: targeted cases beyond the documented examples."""
from __future__ import annotations

import attrs
import pytest

from zcspec.spec.examples.build import GOOD_HEADER, accepted, model_file, node, node_task, soc, task
from zcspec.spec.capabilities import UnknownSocError, capabilities
from zcspec.spec.observables import BuildFacts, SocProfile, ZeroCopyEntry
from zcspec.spec.registry import get

PASS = "PASS-MEMCPY-ADDR-ASYNC"
CONFLICT = "PASS-LAYOUT-CONFLICT"


def _pass_violations(nodes, tasks=(), claim=PASS, **kw):
    return get(claim).violations(model_file(nodes=tuple(nodes), tasks=tuple(tasks), **kw))


def test_memcpy_addr_async_not_required_when_the_soc_cannot_do_it():
    nodes = [node("c", "Const"), node("out", "NetOutput", "c")]
    assert _pass_violations(nodes, soc=soc(False)) == ()
    extra = [node("c", "Const"), node("m", "MemcpyAddrAsync", "c"), node("out", "NetOutput", "m")]
    (v,) = _pass_violations(extra, soc=soc(False))
    assert v.culprit == "node 'm'"  # one where none is required is reported too


_HCCL = [node_task(0, "ar", "hccl")]      # legacy cannot refresh HCCL tasks
_HCCL_OK = [node_task(0, "ar", "hccl")]


@pytest.mark.parametrize("nodes, tasks, soc_name, build, claim, needed", [
    ([node("x", "Data"), node("sm", "StreamMerge", "x")], [], "legacy", BuildFacts(), PASS, True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(), PASS, False),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(offline=True), PASS, True),
    ([node("x", "Data"), node("out", "NetOutput", "x")], [], "legacy", BuildFacts(single_op=True), PASS, True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL, "legacy", BuildFacts(), PASS, True),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL, "legacy", BuildFacts(feature_base_refreshable=True),
     PASS, False),
    ([node("r", "RefData"), node("ar", "HcomAllReduce", "r")], _HCCL_OK, "ascend910b", BuildFacts(), PASS, False),
    # The spec's table, not the compiler, says what a SoC refreshes: memset is stuck on ascend310p only.
    ([node("k", "ReduceSum"), node("out", "NetOutput", "k")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend310p", BuildFacts(), CONFLICT, True),
    ([node("k", "ReduceSum"), node("out", "NetOutput", "k")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend310p", BuildFacts(), PASS, False),     # the conflict optimizer's Identity, not MemcpyAddrAsyncPass's
    ([node("k", "ReduceSum"), node("out", "NetOutput", "k")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend910b", BuildFacts(), CONFLICT, False),
    ([node("x", "Data"), node("k", "ReduceSum", "x")], [node_task(0, "k", "memset", roles=("out",))],
     "ascend310p", BuildFacts(), CONFLICT, False),    # a memset touches outputs only, so the input is not stuck
    ([node("x", "Data"), node("k", "Relu", "x")], [node_task(0, "k", in_loop=True)], "legacy", BuildFacts(), CONFLICT,
     True),
    # A refreshable feature base makes HCCL refreshable (GE's IsAddressRefreshable), not a task in a loop.
    ([node("x", "Data"), node("k", "Relu", "x")], [node_task(0, "k", in_loop=True)], "legacy",
     BuildFacts(feature_base_refreshable=True), CONFLICT, True),
    ([node("x", "Data"), node("ar", "HcomAllReduce", "x")], _HCCL, "legacy", BuildFacts(), CONFLICT, True),
    ([node("x", "Data"), node("ar", "HcomAllReduce", "x")], _HCCL, "legacy",
     BuildFacts(feature_base_refreshable=True), CONFLICT, False),
    ([node("ar", "HcomAllReduce"), node("out", "NetOutput", "ar")], _HCCL, "legacy", BuildFacts(), CONFLICT, True),
    ([node("ar", "HcomAllReduce"), node("out", "NetOutput", "ar")], _HCCL, "legacy",
     BuildFacts(feature_base_refreshable=True), CONFLICT, False),
    ([node("x", "Data"), node("ar", "HcomAllReduce", "x")], [node_task(0, "ar", "hccl", in_loop=True)], "legacy",
     BuildFacts(feature_base_refreshable=True), CONFLICT, True),
    ([node("x", "Data"), node("k", "Relu", "x")], [node_task(0, "k", in_loop=True)], "ascend910b", BuildFacts(),
     CONFLICT, False),
])
def test_memcpy_addr_async_rules(nodes, tasks, soc_name, build, claim, needed):
    """PASS-MEMCPY-ADDR-ASYNC: each insertion rule of GE's MemcpyAddrAsyncPass and the conditions that switch
    it off; PASS-LAYOUT-CONFLICT: user memory and a task the SoC cannot refresh."""
    found = _pass_violations(nodes, tasks, claim=claim, soc=SocProfile(soc_name), build=build)
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
    assert {v.culprit for v in get(CONFLICT).violations(missing)} == {"edge 'x' -> 'red'", "edge 'red' -> 'out'"}
    memset = (node_task(0, "red", roles=("in", "out")), node_task(1, "red", "memset", roles=("out",)))
    copy = NodeInfo("identity_0_NetOutput_MemLayoutConflict_0", "Identity", ("red",))
    fixed = model_file(nodes=(*base, red, copy, node("out", "NetOutput", copy.name)),
                       tasks=memset, soc=SocProfile("ascend310p"))
    assert get(CONFLICT).violations(fixed) == () and get(PASS).violations(fixed) == ()
    # A MemcpyAddrAsync there decouples the output too, but MemcpyAddrAsyncPass has no rule for that edge.
    memcpy = node("red_MemcpyAddrAsync_0", "MemcpyAddrAsync", "red")
    other = model_file(nodes=(*base, red, memcpy, node("out", "NetOutput", memcpy.name)), tasks=memset,
                       soc=SocProfile("ascend310p"))
    assert get(CONFLICT).violations(other) == ()
    assert [v.culprit for v in get(PASS).violations(other)] == ["node 'red_MemcpyAddrAsync_0'"]
