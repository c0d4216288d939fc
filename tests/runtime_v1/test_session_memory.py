"""Models of one session share its feature-map memory under GE's extend-size static memory policy.

GE: ``DavinciModel::MallocFeatureMapMem`` (davinci_model.cc) takes the feature map from the session's
``ActiveMemoryAllocator`` when ``VarManager::IsGeUseExtendSizeMemory`` (ge.exec.staticMemoryPolicy 1, 2
or 4); ``FreeFeatureMapMem`` gives the hold back at unload and the last holder frees the blocks.
``test_load_model_with_extending_static_memory`` and ``test_load_model_with_no_extending_static_memory``
port GE's st tests of those names (tests/ge/st/testcase/test_davinci_model_execute.cc); the others run
the models (alternating executions, outputs checked, every spec claim on every observation).
"""
import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import trace as tr
from zcspec.impl.runtime.user_buffers import free_buffers, read_outputs, stage_inputs, alloc_outputs
from zcspec.impl.runtime.v1 import InvalidParam, LoadOptions, MemoryAllocationError, Session, load
from zcspec.impl.runtime.v1.observe import observe_execution, observe_load
from zcspec.spec.check import check
from tests.helpers.runtime_v1 import device, expected, mlp


def chain(name: str, shape, n: int):
    """x -> Neg -> Relu -> Neg ... (n ops): a feature map that grows with ``shape`` and ``n``."""
    b = GraphBuilder(name)
    h = b.input("x", shape)
    for i in range(n):
        h = b.op("Relu" if i % 2 else "Neg", [h], name=f"op{i}")
    b.output(h)
    return build_model(b.build(), CompileOptions(soc="ascend910b"))


def chain_expected(x, n: int):
    for i in range(n):
        x = np.maximum(x, 0) if i % 2 else -x
    return x


def _session_calls(dev, call: str) -> list:
    return [e for e in dev.trace.of_type(tr.AllocatorCall) if e.call == call and e.phase == "exit"]


def _session_allocations(dev) -> list:
    return [a for a in dev.allocations() if a.tag.startswith("v1 active memory")]


def test_load_model_with_extending_static_memory():
    """GE: load_model_with_extending_static_memory. Policy "2": model 2 reuses model 1's feature map (one
    mem_base_); model 3, larger, while both are loaded, needs memory of its own; unloading all frees all."""
    dev, session = device(), Session("2")
    opts = LoadOptions(session=session)
    small, large = chain("m", (4,), 2), chain("big", (64, 64), 4)
    m1, m2 = load(dev, small, opts), load(dev, small, opts)
    assert m1.base("feature_map") == m2.base("feature_map")
    assert len(_session_allocations(dev)) == 1
    m3 = load(dev, large, opts)
    assert len(_session_allocations(dev)) == 2 and m3.base("feature_map") != m1.base("feature_map")
    allocator = session.allocator(dev)
    assert allocator.used_count == 3
    for lm in (m1, m2):
        lm.unload()
        assert len(_session_allocations(dev)) == 2        # still held by the others
    m3.unload()
    assert not dev.allocations() and allocator.used_count == 0
    assert len(_session_calls(dev, "malloc_memory")) == len(_session_calls(dev, "free_memory")) == 3


def test_load_model_with_no_extending_static_memory():
    """GE: load_model_with_no_extending_static_memory. Policy "2" with reuseZeroCopyMemory: the zero-copy
    piece needs no memory, both models share one feature map base."""
    dev = device()
    opts = LoadOptions(session=Session("2"), reuse_zero_copy_memory=1)
    a, b = load(dev, mlp(), opts), load(dev, mlp(), opts)
    assert a.base("feature_map") == b.base("feature_map")
    assert not a.bases.zero_copy_backed and not b.bases.zero_copy_backed
    a.unload(), b.unload()
    assert not dev.allocations()


def _run(dev, lm, x, want) -> None:
    ins = stage_inputs(dev, lm.model, {"x": x})
    outs = alloc_outputs(dev, lm.model)
    rec = lm.execute(ins, outs)
    report = check(observe_execution(lm, rec))
    assert report.ok, str(report)
    got = read_outputs(dev, lm.model, outs)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value)
    free_buffers(dev, ins + outs)


@pytest.mark.parametrize("zero_copy", [True, False])
def test_two_models_of_a_session_execute_alternately(zero_copy):
    """Two models in one session, one feature map: each execution is right although the other model's
    last run wrote the same memory; every claim holds on every execution, the first unload frees no
    session memory (the other model holds it) and the last frees it all."""
    dev, rng = device(), np.random.default_rng(3)
    opts = LoadOptions(zero_copy=zero_copy, session=Session("2"))
    other = chain("chain", (2, 3), 3)          # its feature map (1 KiB) is larger than mlp's: loaded first
    b, a = load(dev, other, opts), load(dev, mlp(), opts)
    assert a.base("feature_map") == b.base("feature_map")
    if not zero_copy:    # the I/O region is a piece of the session's memory too (GE's zero-copy piece)
        blocks = [(x.addr, x.end) for x in _session_allocations(dev)]
        for lm in (a, b):
            assert any(s <= lm.base("zero_copy") and lm.base("zero_copy") + lm.model.zero_copy_size <= e
                       for s, e in blocks)
    for _ in range(3):
        x = rng.standard_normal((2, 3)).astype(np.float32)
        _run(dev, a, x, expected(x))
        y = rng.standard_normal((2, 3)).astype(np.float32)
        _run(dev, b, y, {"op2:0": chain_expected(y, 3)})
    before = len(_session_allocations(dev))
    a.unload()
    assert len(_session_allocations(dev)) == before
    last_a = check(observe_execution(a, a.last_call))
    assert last_a.ok, str(last_a)
    obs = observe_execution(a, a.last_call)
    assert obs.events[-1].kind == "unload" and obs.events[-1].holders == 1
    b.unload()
    assert not dev.allocations()
    obs = observe_execution(b, b.last_call)
    assert obs.events[-1].holders == 0
    report = check(obs)
    assert report.ok, str(report)


def test_the_load_observation_reads_the_shared_feature_map_from_the_trace():
    """The second load allocates nothing: its observation shows the session's blocks live when it began and
    the feature map where the allocator's call put it, as the device trace records them."""
    dev, session = device(), Session("1")
    first = load(dev, mlp(), LoadOptions(session=session))
    second = load(dev, mlp(), LoadOptions(session=session))
    obs = observe_load(second)
    call = [e for e in dev.trace.since(second.load_span[0])[:second.load_span[1] - second.load_span[0]]
            if isinstance(e, tr.AllocatorCall) and e.call == "malloc_memory" and e.phase == "exit"]
    assert obs.region("feature_map").address == call[0].addr == first.base("feature_map")
    shared = [e for e in obs.events if e.kind == "alloc" and e.owner == "session"]
    assert len(shared) == 1 and shared[0].address <= call[0].addr < shared[0].address + shared[0].size
    assert check(obs).ok
    first.unload(), second.unload()


@pytest.mark.parametrize("policy", ["", "0", "3"])
def test_other_policies_keep_each_model_s_own_feature_map(policy):
    dev = device()
    opts = LoadOptions(session=Session(policy))
    a, b = load(dev, mlp(), opts), load(dev, mlp(), opts)
    assert a.base("feature_map") != b.base("feature_map") and not _session_allocations(dev)
    a.unload(), b.unload()


def test_the_caller_s_work_memory_is_used_as_given():
    """GE calls MallocFeatureMapMem only when the caller gave no work memory."""
    dev, m = device(), mlp()
    work = dev.malloc(m.memory_size, tag="user work")
    lm = load(dev, m, LoadOptions(session=Session("2")), work=(work, m.memory_size))
    assert lm.base("feature_map") == work and not _session_allocations(dev)
    lm.unload()


@pytest.mark.parametrize("bad, match", [
    ("5", "must be one of"), (2, "must be one of"), ("4", "extend-size-full"), (None, "must be one of")])
def test_bad_static_memory_policies_are_refused(bad, match):
    with pytest.raises(InvalidParam, match=match):
        Session(bad)


def test_bad_session_options_are_refused():
    with pytest.raises(InvalidParam, match="must be a zcspec.impl.runtime.v1.Session"):
        LoadOptions(session="s1")
    with pytest.raises(InvalidParam, match="feature_base_refreshable with Session"):
        LoadOptions(session=Session("2"), feature_base_refreshable=True)
    LoadOptions(session=Session("0"), feature_base_refreshable=True)   # no sharing: nothing to refuse


def test_a_failed_load_gives_its_hold_back():
    """Memory the session cannot get: the load fails with ACL_ERROR_GE_MEMORY_ALLOCATION, the hold it took
    is given back and nothing stays allocated."""
    dev, session = device(capacity=32 << 10), Session("2")
    with pytest.raises(MemoryAllocationError):
        load(dev, chain("big", (64, 64), 4), LoadOptions(session=session))
    assert session.allocator(dev).used_count == 0 and not dev.allocations()


def test_a_load_failing_after_the_feature_map_gives_its_hold_back():
    """On every device too small for the whole load, a load that got its feature map from the session
    and then failed gives the hold back and leaves nothing allocated (load.py's clean-up)."""
    failed_after = 0
    for kib in range(1, 40):
        dev, session = device(capacity=kib << 10), Session("2")
        try:
            load(dev, mlp(), LoadOptions(session=session)).unload()
        except MemoryAllocationError:
            failed_after += any(e.addr for e in _session_calls(dev, "malloc_memory"))
        assert session.allocator(dev).used_count == 0 and not dev.allocations()
    assert failed_after, "no capacity made the load fail after the session's call"


def test_no_leak_sees_a_hold_never_given_back():
    """A runtime whose unload forgets the session's FreeMemory: the session's blocks outlive the last
    model, and EXEC-NO-LEAK, reading the allocator's calls from the trace, says so for it (the first
    model's unload gave nothing back either, so its observation shows the leak too)."""
    dev, session = device(), Session("2")
    opts = LoadOptions(session=session)
    a, b = load(dev, mlp(), opts), load(dev, mlp(), opts)
    x = np.ones((2, 3), np.float32)
    for lm in (a, b):
        _run(dev, lm, x, expected(x))
    session.allocator(dev).free_memory = lambda: None     # the wiring broken: no hold given back
    a.unload(), b.unload()
    for lm in (a, b):
        report = check(observe_execution(lm, lm.last_call))
        assert report.violated() == ("EXEC-NO-LEAK",), str(report)
        assert observe_execution(lm, lm.last_call).events[-1].holders is None


def test_no_leak_keeps_memory_the_other_model_still_holds():
    """The first unload of two gives its hold back and frees nothing: not a leak, one holder left."""
    dev, session = device(), Session("2")
    a, b = load(dev, mlp(), LoadOptions(session=session)), load(dev, mlp(), LoadOptions(session=session))
    x = np.ones((2, 3), np.float32)
    _run(dev, a, x, expected(x))
    a.unload()
    obs = observe_execution(a, a.last_call)
    assert obs.events[-1].holders == 1 and check(obs).ok
    b.unload()
