"""GE's ``tests/ge/ut/ge/graph/load/memcpy_addr_async_task_info_unittest.cc`` (UtestMemcpyAddrAsyncTaskInfo), ported.

GE's fixture fakes a DavinciModel (logic memory base 0x8003000, feature map 0x5000 bytes, one logical
allocation over all addresses) and a MemcpyAddrAsync task def (D2D, dst_max 512, src 0x8003100, dst
0x8003000: both in the feature map), then calls MemcpyAddrAsyncTaskInfo's ParseTaskRunParam, Init,
GetTaskArgsRefreshInfos and Distribute, reading the refresh infos the task registers. Here the task is a
MemcpyAddrAsync node between two feature-map tensors of a zcspec graph (data -> Relu -> MemcpyAddrAsync ->
Neg -> output, 512 bytes each), compiled by zcspec and loaded by runtime v1 with
``feature_base_refreshable``; the refresh infos are observed as the argument slots of the copy task that
the device sees rewritten when the feature map moves, and the ranges the copy then reads and writes. See
MEMCPY_ADDR_ASYNC_CASES.md for the rows without a test.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case
from zcspec.checks.cases.ge.runtime_scenarios import launches, ones, range_starts, written_starts
from zcspec.checks.cases.ge.trust_memcpy_scenarios import memcpy_addr_async_in_feature_map
from zcspec.impl.device import Device
from zcspec.impl.device.trace import ArgWrite
from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load, LoadOptions


@ge_case("memcpy_addr_async_task_info_unittest.cc")
def memcpy_async_task_init_success():
    """memcpy_addr_async_task_info_unittest.cc TEST_F(UtestMemcpyAddrAsyncTaskInfo, memcpy_async_task_init_success):
    args format "{}{}{i_instance0*}{o_instance0*}", src and dst in the feature map; GE expects ParseTaskRunParam
    and Init to succeed and GetTaskArgsRefreshInfos to give 2 refresh infos: src and dst. Here the model loads
    into caller work memory, runs once, the work memory is moved; on the next execution the device sees exactly
    two argument slots of the MemcpyAddrAsync task rewritten, each to the new feature-map base plus its old
    offset, and the copy reads the first (src) and writes the second (dst)."""
    model = memcpy_addr_async_in_feature_map()
    fm = model.regions["feature_map"]
    dev = Device(model.soc)
    old, new = dev.malloc(fm), dev.malloc(fm)
    mark = dev.trace.mark()
    lm = load(dev, model, LoadOptions(feature_base_refreshable=True), work=(old, fm))
    ins, outs = stage_inputs(dev, model, ones(model)), alloc_outputs(dev, model)
    first = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    (copy,) = launches(dev, first, "MemcpyAddrAsync")
    at_load = {e.slot: e.value - old for e in dev.trace.of_type(ArgWrite, mark) if e.task == copy.task}
    fact(sorted(at_load) == [0, 1] and all(0 <= off < fm for off in at_load.values()),
         'sorted(at_load) == [0, 1] and all(0 <= off < fm for off in at_load.values())')

    lm.update_work_memory(new, fm)
    moved = dev.trace.mark()
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    refreshed = {e.slot: e.value for e in dev.trace.of_type(ArgWrite, moved) if e.task == copy.task and e.refresh}
    expect(len(refreshed), 2, 'len(refreshed)')
    expect(refreshed, {slot: new + off for slot, off in at_load.items()}, 'refreshed')
    (copy,) = launches(dev, moved, "MemcpyAddrAsync")
    fact(range_starts(copy.reads) == {refreshed[0]} and written_starts(copy) == {refreshed[1]},
         'range_starts(copy.reads) == {refreshed[0]} and written_starts(copy) == {refreshed[1]}')
    fact((read_outputs(dev, model, outs)["neg:0"] == -1.0).all(),
         '(read_outputs(dev, model, outs)["neg:0"] == -1.0).all()')
    fact(np.all(dev.peek(new + at_load[1], (128,), np.float32) == 1.0),
         'np.all(dev.peek(new + at_load[1], (128,), np.float32) == 1.0)')
