"""Executions: zero copy binds the user's buffers by refreshing exactly the registered slots;
zero copy off copies; host buffers are staged; the spec's invariants hold on every call."""
import numpy as np
import pytest

from zcspec.impl.device.trace import Copy
from zcspec.impl.runtime.user_buffers import UserBuffer, alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, ParamInvalid, load
from zcspec.impl.runtime.v1.classify import FM
from zcspec.impl.runtime.v1.observe import observe_execution, observe_load
from zcspec.spec.check import check
from tests.helpers.ge_execute_scenarios import data_to_netoutput, netoutput_not_zero_copy
from tests.helpers.runtime_v1 import buffers, device, expected, mlp, passthrough, passthrough_on


def run_ok(lm, ins, outs):
    rec = lm.execute(ins, outs)
    report = check(observe_execution(lm, rec))
    assert report.ok, str(report)
    return rec


def test_fresh_buffers_refresh_every_registered_slot_and_same_buffers_none():
    dev, m = device(), mlp()
    lm = load(dev, m)
    assert lm.registered == len(m.tasks.zero_copy) == 4   # add.x, neg.x, relu.out, neg.out
    for k in range(4):
        x = np.full((2, 3), k - 1.5, np.float32)
        ins, outs = buffers(dev, m, x)
        rec = run_ok(lm, ins, outs)
        assert rec.counters.args_refreshed == lm.registered
        assert rec.refresh.changed and FM not in rec.refresh.changed
        again = run_ok(lm, ins, outs)
        assert again.counters.args_refreshed == 0 and again.refresh.changed == ()
        got = read_outputs(dev, m, outs)
        for name, want in expected(x).items():
            np.testing.assert_array_equal(got[name], want)
        free_buffers(dev, ins + outs)


def test_zero_copy_moves_no_io_bytes_and_zero_copy_off_copies_exactly_the_io_bytes():
    m = mlp()
    io_bytes = sum(d.nbytes for d in m.tasks.inputs + m.tasks.outputs)
    for zc, d2d in ((True, 0), (False, io_bytes)):
        dev = device()
        lm = load(dev, m, LoadOptions(zero_copy=zc))
        ins, outs = buffers(dev, m)
        c = run_ok(lm, ins, outs).counters
        assert (c.d2d_bytes, c.h2d_bytes, c.d2h_bytes) == (d2d, 0, 0)
        assert c.args_refreshed == (lm.registered if zc else 0)
        assert c.allocated_bytes == 0


def test_zero_copy_region_is_allocated_only_with_zero_copy_off():
    m = mlp()
    for zc in (True, False):
        dev = device()
        load(dev, m, LoadOptions(zero_copy=zc))
        tags = [a.tag for a in dev.allocations()]
        assert ("v1 model I/O region" in tags) == (not zc)
        region = observe_load(load(device(), m, LoadOptions(zero_copy=zc))).region("zero_copy")
        assert region.backed == (not zc)


def test_host_buffers_are_staged_within_the_call_and_accounting_returns_to_baseline():
    dev, m = device(), mlp()
    lm = load(dev, m)
    ins, outs = buffers(dev, m, placement="host")
    base = dev.counters.allocated_bytes
    c = run_ok(lm, ins, outs).counters
    assert c.h2d_bytes == m.tasks.inputs[0].nbytes
    assert c.d2h_bytes == sum(d.nbytes for d in m.tasks.outputs)
    assert c.alloc_calls == c.free_calls == 3 and dev.counters.allocated_bytes == base
    got = read_outputs(dev, m, outs)
    np.testing.assert_array_equal(got["neg:0"], -(np.arange(6, dtype=np.float32).reshape(2, 3) - 2))


def test_reuse_zero_copy_memory_rejects_host_io_naming_the_buffer():
    dev, m = device(), mlp()
    lm = load(dev, m, LoadOptions(reuse_zero_copy_memory=1))
    ins, outs = buffers(dev, m, placement="host")
    with pytest.raises(ParamInvalid, match="'x'.*Zero-copy memory reuse mode") as e:
        lm.execute(ins, outs)
    assert e.value.code == 145000 and e.value.buffer == "x"


@pytest.mark.parametrize("opts", [LoadOptions(), LoadOptions(zero_copy=False), LoadOptions(reuse_zero_copy_memory=1),
                                  LoadOptions(legacy_copy_only_addrs=True)])
def test_copy_only_io_data_to_netoutput_and_hccl(opts):
    dev, m = device(), passthrough()
    lm = load(dev, m, opts)
    copy_only = {z.name for z in lm.io if z.copy_only}
    # x feeds the collective through GE's HcclContinuousMemcpyPass copy, so x itself stays zero copy.
    assert {"y:output1", "fl:0"} <= copy_only and ("x" in copy_only) == (not opts.zero_copy)
    # GenOutputMemAllocations: the Data feeding NetOutput stays zero copy (a Relu reads it); its outputs are
    # copied from its buffer. The legacy rules (an output held whole in the input) agree here.
    assert ("y:input1" in copy_only) == (not opts.zero_copy)
    assert {z.name: z.copy_from for z in lm.io if z.copy_from} == {"y:output1": (("input", 1), 0),
                                                                   "fl:0": (("input", 1), 0)}
    x, y = np.arange(4, dtype=np.float32), -np.ones((2, 3), np.float32)
    ins = stage_inputs(dev, m, {"x": x, "y": y})
    outs = alloc_outputs(dev, m)
    rec = run_ok(lm, ins, outs)
    got = read_outputs(dev, m, outs)
    np.testing.assert_array_equal(got["ar:0"], x)
    np.testing.assert_array_equal(got["y"], y)
    np.testing.assert_array_equal(got["fl:0"], y)
    np.testing.assert_array_equal(got["r:0"], np.zeros((2, 3), np.float32))
    report = check(observe_execution(lm, rec))
    # The HCCL I/O here is copy-only for another reason too (it lives in the feature map), so it cannot
    # tell a runtime that honours the HCCL flag from one that does not: V1-HCCL-COPY is not exercised.
    assert "V1-COPY-ONLY-ONCE" in report.exercised and "V1-HCCL-COPY" not in report.exercised


def _copies(dev, mark) -> list[tuple[int, int, int]]:
    return [(c.src, c.dst, c.nbytes) for c in dev.trace.of_type(Copy, mark)]


def test_copies_of_no_task_args_associate_user_model_io():
    """GE's NetoutputNotSupportZeroCopy (tests/ge's test_no_task_args_associate_user_model_io): data_1 is read
    by no task, the output is a PhonyConcat's continuous output in the feature map. GE's execute path makes
    data_1 a refreshable allocation no slot uses (GenInputMemAllocations: its address is inside no earlier
    allocation) and copies only the output, found inside the feature-map allocation
    (GenOutputMemAllocations, CopyOutputForNoZeroCopy): one 128-byte copy per run, none of the input. GE's
    legacy copy_only_addrs_ (SetCopyOnlyOutput) also copied the input: 96 more bytes per run."""
    model = netoutput_not_zero_copy()
    for opts, input_copied in ((LoadOptions(), False), (LoadOptions(legacy_copy_only_addrs=True), True)):
        dev = device()
        lm = load(dev, model, opts)
        for _ in range(2):
            inp = UserBuffer("data_1", dev.upload(np.zeros((2, 2, 2, 2), np.int32)), 64)
            out = UserBuffer("pc1:0", dev.malloc(128), 128)
            mark = dev.trace.mark()
            run_ok(lm, [inp], [out])   # and the spec computes the same copies
            moved = _copies(dev, mark)
            assert [c for c in moved if c[1] == out.addr and c[2] == 128] == [c for c in moved if c[1] == out.addr]
            assert len([c for c in moved if c[1] == out.addr]) == 1
            assert [c[2] for c in moved if c[0] == inp.addr] == ([64] if input_copied else [])
            assert len(moved) == 1 + input_copied


def test_a_runtime_that_still_copies_an_unread_input_is_caught():
    """Planted: the legacy rule (SetCopyOnlyOutput) applied where GE's execute path decides. The spec, judging
    the load as GE's execute path, finds the unread input eligible and the copy through its buffer a
    violation; judged as the legacy path it asked for, the same run holds."""
    import attrs
    model = netoutput_not_zero_copy()
    dev = device()
    lm = load(dev, model, LoadOptions(legacy_copy_only_addrs=True))
    rec = run_ok(lm, [UserBuffer("data_1", dev.upload(np.zeros((2, 2, 2, 2), np.int32)), 64)],
                 [UserBuffer("pc1:0", dev.malloc(128), 128)])
    obs = observe_execution(lm, rec)
    assert check(obs).ok and "V1-COPY-ONLY-ONCE" in check(obs).exercised
    as_ge = attrs.evolve(obs, load=attrs.evolve(obs.load, options=attrs.evolve(obs.load.options,
                                                                                legacy_copy_only_addrs=False)))
    found = [v for v in check(as_ge).violations if v.invariant_id == "V1-ZERO-COPY-WHEN-ELIGIBLE"]
    assert [v.culprit for v in found] == ["buffer 'data_1'"]


def test_copies_of_zero_copy_ok_when_input_directly_connected_to_output():
    """GE's BuildInputDirectlyConnectedToOutputGraph (tests/ge's
    test_zero_copy_ok_when_input_directly_connected_to_output): data1 (int32 1x2x3x4, 96 bytes) -> NetOutput.
    GE's execute path keeps the input a refreshable allocation (no task uses it), finds the output's
    address inside it (GenOutputMemAllocations) and after the run copies once from the input's active
    base, the user's input buffer, into the user's output buffer (CopyOutputForNoZeroCopy): 96 bytes,
    device to device. GE's legacy copy_only_addrs_ copied the input in and the output out: 2 x 96 bytes."""
    model = data_to_netoutput()
    for opts, expect in ((LoadOptions(), "one"), (LoadOptions(legacy_copy_only_addrs=True), "two")):
        dev = device()
        lm = load(dev, model, opts)
        x = np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4)
        ins, outs = stage_inputs(dev, model, {"data1": x}), alloc_outputs(dev, model)
        mark = dev.trace.mark()
        rec = run_ok(lm, ins, outs)
        moved = _copies(dev, mark)
        if expect == "one":
            assert moved == [(ins[0].addr, outs[0].addr, 96)]
        else:
            (cin, cout) = moved
            assert (cin[0], cout[1], cin[2], cout[2]) == (ins[0].addr, outs[0].addr, 96, 96) and cin[1] == cout[0]
        assert rec.counters.d2d_bytes == 96 * len(moved)
        np.testing.assert_array_equal(read_outputs(dev, model, outs)["data1"], x)


def test_feature_map_move_refreshes_feature_map_slots():
    dev, m = device(), mlp()
    lm = load(dev, m, LoadOptions(feature_base_refreshable=True))
    ins, outs = buffers(dev, m)
    run_ok(lm, ins, outs)
    fm_slots = len(lm.refresh_table.of(FM))
    work = dev.malloc(m.regions["feature_map"])
    lm.update_work_memory(work, m.regions["feature_map"])
    rec = run_ok(lm, ins, outs)
    assert rec.counters.args_refreshed == fm_slots > 0
    assert FM in rec.refresh.changed
    np.testing.assert_array_equal(read_outputs(dev, m, outs)["relu:0"], expected(np.arange(6, dtype=np.float32).reshape(2, 3) - 2)["relu:0"])


def test_moving_work_memory_that_holds_the_io_region_moves_the_copy_only_io_with_it():
    """Caller work memory of the model's whole memory size holds the I/O region after the feature map. A move
    (update_work_memory) and a free of the old memory must take the copy-only I/O along (zero copy off: every
    I/O is copied through the region): left behind, the copies wrote freed memory (found by verify's
    moved-work-memory runs)."""
    from zcspec.impl.runtime.v1.load import query_size

    dev, m = device(), passthrough()
    size = int(query_size(m)[0])
    work = dev.malloc(size)
    lm = load(dev, m, LoadOptions(feature_base_refreshable=True, zero_copy=False), work=(work, size))
    x, y = np.arange(4, dtype=np.float32), -np.ones((2, 3), np.float32)
    for _ in range(2):
        moved = dev.malloc(size)
        lm.update_work_memory(moved, size)
        dev.free(work)
        work = moved
        ins, outs = stage_inputs(dev, m, {"x": x, "y": y}), alloc_outputs(dev, m)
        mark = dev.trace.mark()
        run_ok(lm, ins, outs)
        np.testing.assert_array_equal(read_outputs(dev, m, outs)["y"], y)
        d2d = [c for c in dev.trace.of_type(Copy, mark) if c.direction == "d2d"]
        assert d2d and all(work <= c.dst < work + size or work <= c.src < work + size for c in d2d), d2d
        free_buffers(dev, ins + outs)


def test_moving_work_memory_that_holds_the_io_region_needs_room_for_it():
    from zcspec.impl.runtime.v1.load import query_size

    dev, m = device(), passthrough()
    size = int(query_size(m)[0])
    work = dev.malloc(size)
    lm = load(dev, m, LoadOptions(feature_base_refreshable=True), work=(work, size))
    small = dev.malloc(size - 1)   # room for the feature map, not for the I/O region after it
    assert size - 1 >= m.regions.get("feature_map", 0)
    with pytest.raises(ParamInvalid, match=f"I/O region it holds need {size}") as e:
        lm.update_work_memory(small, size - 1)
    assert e.value.buffer == "work" and lm.base("feature_map") == work


def test_unload_frees_everything_the_model_and_runtime_allocated():
    from zcspec.spec.invariants.execution import NO_LEAK

    dev, m = device(), passthrough()
    lm = load(dev, m)
    ins = stage_inputs(dev, m, {"x": np.ones(4, np.float32), "y": np.ones((2, 3), np.float32)})
    outs = alloc_outputs(dev, m, "host")
    rec = lm.execute(ins, outs)
    lm.unload()
    report = check(observe_execution(lm, rec), invariants=[NO_LEAK])
    assert report.ok and "EXEC-NO-LEAK" in report.exercised


def test_a_model_whose_zero_copy_table_disagrees_with_its_slots_is_refused():
    import attrs

    from zcspec.impl.runtime.v1 import InternalError

    m = mlp()
    bad = attrs.evolve(m, tasks=attrs.evolve(m.tasks, zero_copy=m.tasks.zero_copy[1:]))
    with pytest.raises(InternalError, match="disagree with the compiler's zero-copy table") as e:
        load(device(), bad)
    assert e.value.code == 545000


@pytest.mark.parametrize("soc", ["legacy", "ascend310p", "nozc"])
def test_other_socs_run_and_satisfy_the_spec(soc):
    dev, m = device(soc), passthrough_on(soc)
    lm = load(dev, m)
    x, y = np.arange(4, dtype=np.float32), -np.ones((2, 3), np.float32)
    ins = stage_inputs(dev, m, {"x": x, "y": y})
    outs = alloc_outputs(dev, m)
    run_ok(lm, ins, outs)
    got = read_outputs(dev, m, outs)
    np.testing.assert_array_equal(got["ar:0"], x)
    np.testing.assert_array_equal(got["fl:0"], y)
    if soc == "nozc":   # no refresh at all: every I/O is copied
        assert all(z.copy_only for z in lm.io) and lm.registered == 0


def test_an_output_held_in_an_input_that_shares_a_host_buffer_is_copied_from_either_staging():
    """Found by verify's campaign: inputs in0 and in1 on one host buffer, an output that is a view of in1 (held in
    in1's allocation, copied out of it). The runtime stages the buffer twice, once per input, and copies the
    output out of in1's staging; the spec expected the first copy made out of the shared buffer (in0's) and
    reported a missing copy. Both stagings hold the same bytes: either is where in1 is in the call."""
    from zcspec.checks.scenario import Scenario, observe
    from zcspec.impl.compiler.builder import GraphBuilder
    b = GraphBuilder("shared_host")
    in0, in1 = b.input("in0", (1, 3)), b.input("in1", (1, 3))
    b.output(b.op("Relu", [in0], name="r"), b.op("Unsqueeze", [in1], name="u", axes=(0,), shape=(1, 1, 3)))
    run = {"runtime": "v1", "placement": "host", "share": [["in0", "in1"]]}
    observations = observe(Scenario("execution", b.build(), runtime=run))
    reports = [check(o) for o in observations]
    assert any("V1-COPY-ONLY-ONCE" in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []
