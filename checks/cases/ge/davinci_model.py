"""GE's ``tests/ge/ut/ge/graph/load/davinci_model_unittest.cc`` (UtestDavinciModel), ported: the tests
on zero copy, I/O address refresh, copy-only I/O, caller memory and I/O size checks.

GE fakes a model (``ATTR_MODEL_MEMORY_SIZE``, ``ATTR_MODEL_ZERO_COPY_MEMORY_SIZE``, op offsets, a
MemcpyAsync task) and calls DavinciModel methods, reading its members (``copy_only_addrs_``,
``input_data_info_``...). Here the scenario is a zcspec graph compiled by zcspec and run by runtime v1
on the emulated device; the facts are read from the device: its counters (bytes copied, slots
refreshed), its trace (launches, copies, allocations) and the load or execute call's outcome. GE's
``data -> memcpy -> output`` fixture (one float 1x4x4x8 tensor, 512 bytes) becomes ``data -> Relu ->
output``: a kernel whose argument slots are refreshed as the MemcpyAsync task's are. The other 200-odd
TEST_Fs (AIPP, queues, profiling, dump, FFTS, file constants...) are rows in RUNTIME_CASES.md.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, refuses
from zcspec.checks.cases.ge.runtime_scenarios import (
    data_kernel_netoutput,
    data_to_netoutput,
    launches,
    NCHW_512,
    ones,
)
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.device.trace import Alloc
from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs, UserBuffer
from zcspec.impl.runtime.v1 import load, LoadOptions, MemoryAllocationError, ParamInvalid, Session
from zcspec.impl.runtime.v1.active_memory import (
    DRV_1G_PAGE, DRV_PAGE, ExpandableActiveMemoryAllocator, SessionMemAllocator,
)

REUSE = LoadOptions(reuse_zero_copy_memory=1)
LEGACY = LoadOptions(legacy_copy_only_addrs=True)   # GE's copy_only_addrs_, which only its legacy paths read


def _buffers(dev, model, placement="device", out_placement=None):
    ins = stage_inputs(dev, model, ones(model), placement)
    return ins, alloc_outputs(dev, model, out_placement or placement)


@ge_case("davinci_model_unittest.cc")
def NnExecute():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecute) (TestNnExecute): data -> memcpy ->
    output, one 1x4x4x8 float tensor of 512 bytes; GE expects an output blob of 512 bytes, a successful
    execution with it as input, and a failed one once the input blob is 128 bytes ("128 not enough").
    The refused call launches nothing."""
    model = data_kernel_netoutput()
    expect([io.nbytes for io in model.tasks.outputs], [512], '[io.nbytes for io in model.tasks.outputs]')
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, outs = _buffers(dev, model)
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')
    mark = dev.trace.mark()
    with refuses(ParamInvalid):
        lm.execute([UserBuffer("data", ins[0].addr, 128)], outs)
    expect(launches(dev, mark), [], 'launches(dev, mark)')


@ge_case("davinci_model_unittest.cc")
def NnExecuteWithHostPlsModelIo():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecuteWithHostPlsModelIo): the NnExecute model
    with its zero-copy size set, executed with host-placed I/O blobs; GE expects success. Here the input
    arrives by one H2D copy and the output leaves by one D2H copy, 512 bytes each."""
    model = data_kernel_netoutput()
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, outs = _buffers(dev, model, "host")
    c = lm.execute(ins, outs).counters
    expect((c.h2d_bytes, c.d2h_bytes, c.kernel_launches), (512, 512, 1),
           '(c.h2d_bytes, c.d2h_bytes, c.kernel_launches)')
    fact((read_outputs(dev, model, outs)["memcpy:0"] == 1.0).all(),
         '(read_outputs(dev, model, outs)["memcpy:0"] == 1.0).all()')


@ge_case("davinci_model_unittest.cc")
def NnExecuteWithHostPlsModelIo_ZeroCopyReuse():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecuteWithHostPlsModelIo_ZeroCopyReuse): the
    same with ge.exec.reuseZeroCopyMemory=1; GE expects NnExecute to fail (zero-copy memory reuse needs
    device I/O). Nothing is launched or copied."""
    model = data_kernel_netoutput()
    dev = Device(model.soc)
    lm = load(dev, model, REUSE)
    ins, outs = _buffers(dev, model, "host")
    before = dev.counters
    with refuses(ParamInvalid):
        lm.execute(ins, outs)
    c = dev.counters - before
    expect((c.kernel_launches, c.copy_bytes()), (0, 0), '(c.kernel_launches, c.copy_bytes())')


@ge_case("davinci_model_unittest.cc")
def NnExecute_triggerZeroCopyMemoryInsufficientError():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecute_triggerZeroCopyMemoryInsufficientError):
    reuseZeroCopyMemory=1, memory size 2580 of which 2560 zero copy, a device input tensor and a host
    (kOnHost) output tensor; GE expects NnExecute to fail. Nothing is launched."""
    model = data_kernel_netoutput()
    dev = Device(model.soc)
    lm = load(dev, model, REUSE)
    ins, outs = _buffers(dev, model, "device", out_placement="host")
    mark = dev.trace.mark()
    with refuses(ParamInvalid):
        lm.execute(ins, outs)
    expect(launches(dev, mark), [], 'launches(dev, mark)')


@ge_case("davinci_model_unittest.cc")
def TestCheckUserAndModelSize():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, TestCheckUserAndModelSize): GE's
    CheckUserAndModelSize refuses a user size of 0 against a model size of 65 (0 + 64 < 65) and accepts a
    user size equal to the model size. Here: an input of padded model size P (544 for 512 raw bytes)
    given P - 65 bytes is refused, given P bytes is accepted."""
    model = data_kernel_netoutput()
    (io,) = model.tasks.inputs
    dev = Device(model.soc)
    lm = load(dev, model)
    ins, outs = _buffers(dev, model)
    big = dev.malloc(io.size)
    with refuses(ParamInvalid, match="plus the aligned 64 bytes"):
        lm.execute([UserBuffer("data", big, io.size - 65)], outs)
    fact(lm.execute([UserBuffer("data", big, io.size)], outs).ok,
         'lm.execute([UserBuffer("data", big, io.size)], outs).ok')


def _chain():
    """data -> Relu -> Neg -> out: the Relu output lives in the feature map."""
    b = GraphBuilder("chain")
    x = b.input("data", NCHW_512)
    b.output(b.op("Neg", [b.op("Relu", [x], name="relu")], name="neg"))
    return build_model(b.build())


@ge_case("davinci_model_unittest.cc")
def get_total_memsize_exclude_zero_copy():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, get_total_memsize_exclude_zero_copy): GE's
    GetTotalMemSizeExcludeZeroCopy is mem_size - zero_copy_size (1024 - 512 = 512). Here that difference is
    what caller work memory must cover: work memory of memory_size - zero_copy_size bytes loads, one byte
    less is refused. (GE's FAILED case, zero_copy_size > mem_size, cannot come out of zcspec's compiler.)"""
    model = _chain()
    fm = model.memory_size - model.zero_copy_size
    fact(fm > 0, 'fm > 0')
    dev = Device(model.soc)
    ptr = dev.malloc(fm)
    with refuses(ParamInvalid):
        load(dev, model, work=(ptr, fm - 1))
    lm = load(dev, model, work=(ptr, fm))
    ins, outs = _buffers(dev, model)
    fact(lm.execute(ins, outs).ok, 'lm.execute(ins, outs).ok')


@ge_case("davinci_model_unittest.cc")
def InitWeightMem_fail():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, InitWeightMem_fail): a model with a 20-byte
    weight buffer; with no caller weight memory GE allocates its own (not FAILED); with caller weight memory
    of 5 bytes GE expects ACL_ERROR_GE_PARAM_INVALID. (GE's "already initialised" and malloc-failure cases
    are not ported.)"""
    b = GraphBuilder("weights")
    x = b.input("data", (5,))
    b.output(b.op("Add", [x, b.weight("w", np.arange(5, dtype=np.float32))], name="add"))
    model = build_model(b.build())
    weight_size = model.regions["weight"]
    fact(weight_size >= 20, 'weight_size >= 20')
    dev = Device(model.soc)
    mark = dev.trace.mark()
    load(dev, model)
    fact(any("weight" in a.tag for a in dev.trace.of_type(Alloc, mark)),
         'any("weight" in a.tag for a in dev.trace.of_type(Alloc, mark))')
    ptr = dev.malloc(weight_size)
    with refuses(ParamInvalid):
        load(dev, model, weight=(ptr, 5))
    fact(load(dev, model, weight=(ptr, weight_size)), 'load(dev, model, weight=(ptr, weight_size))')


def _data_to_netoutput_copies(options):
    model = data_to_netoutput()
    dev = Device(model.soc)
    lm = load(dev, model, options)
    ins, outs = _buffers(dev, model)
    c = lm.execute(ins, outs).counters
    return c, read_outputs(dev, model, outs)


@ge_case("davinci_model_unittest.cc")
def TestDataAsInputOfNetoutputShouldZeroCopy():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, TestDataAsInputOfNetoutputShouldZeroCopy): data1,
    data2 (int64, 64 bytes) -> NetOutput directly, zero-copy blocks, default options; GE expects 2
    copy-only addresses: each Data's address, shared by its input and its output (DisableZeroCopy).
    copy_only_addrs_ is read only by GE's legacy paths, so the port loads with legacy_copy_only_addrs:
    each execution copies both inputs in and both outputs out (4 x 64 bytes) and refreshes no slot.
    (NnExecute copies each output once from its input's buffer instead:
    tests/runtime_v1/test_execute.py::test_copies_of_zero_copy_ok_when_input_directly_connected_to_output.)"""
    c, got = _data_to_netoutput_copies(LEGACY)
    expect((c.d2d_bytes, c.d2d_calls, c.args_refreshed), (256, 4, 0), '(c.d2d_bytes, c.d2d_calls, c.args_refreshed)')
    fact(all((v == 1).all() for v in got.values()), 'all((v == 1).all() for v in got.values())')


@ge_case("davinci_model_unittest.cc")
def TestIsInputOfNetoutputCanZeroCopy():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, TestIsInputOfNetoutputCanZeroCopy), its third
    graph: reuseZeroCopyMemory=1, data1, data2 -> NetOutput directly, no zero-copy-block flag; GE expects 4
    copy-only addresses (two inputs + two outputs). Here, on GE's legacy path (legacy_copy_only_addrs: only
    it reads copy_only_addrs_), each execution copies all four (4 x 64 bytes). The
    first two graphs hand-set ATTR_IS_ZERO_COPY_BLOCK on the Data outputs and read copy_only_addrs_ before
    any task is considered (zcspec's I/O are also copy-only because no task references them): not ported."""
    c, got = _data_to_netoutput_copies(LoadOptions(reuse_zero_copy_memory=1, legacy_copy_only_addrs=True))
    expect((c.d2d_bytes, c.d2d_calls, c.args_refreshed), (256, 4, 0), '(c.d2d_bytes, c.d2d_calls, c.args_refreshed)')


def _fm_refreshable_data_to_netoutput():
    b = GraphBuilder("construct_ge_model")
    b.output(b.input("data", NCHW_512))
    model = build_model(b.build())
    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions(feature_base_refreshable=True))
    ins, outs = _buffers(dev, model)
    rec = lm.execute(ins, outs)
    return model, rec, read_outputs(dev, model, outs)


@ge_case("davinci_model_unittest.cc")
def NnExecute_FmMemoryRefreshOk():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecute_FmMemoryRefreshOk): ConstructGeModel(2560),
    data -> output (512 bytes), SetFeatureBaseRefreshable(true); GE expects an output blob of 512 bytes and
    NnExecute to succeed. Here the output gets the input's bytes by one copy from the user's input buffer
    (512 bytes: GenOutputMemAllocations finds the output inside the input's allocation). (The
    UpdateHbmFmMemBases({nullptr}) part has no counterpart: zcspec refuses a null work pointer.)"""
    model, rec, got = _fm_refreshable_data_to_netoutput()
    expect([io.nbytes for io in model.tasks.outputs], [512], '[io.nbytes for io in model.tasks.outputs]')
    fact(rec.ok and (rec.counters.d2d_bytes, rec.counters.d2d_calls) == (512, 1),
         'rec.ok and (rec.counters.d2d_bytes, rec.counters.d2d_calls) == (512, 1)')
    fact(all((v == 1).all() for v in got.values()), 'all((v == 1).all() for v in got.values())')


@ge_case("davinci_model_unittest.cc")
def NnExecute_FmMemoryRefresh_CopyOutput():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, NnExecute_FmMemoryRefresh_CopyOutput):
    ConstructGeModel(0) (no feature map), data -> output, feature base refreshable; GE expects NnExecute to
    succeed, the output copied (here once, 512 bytes, from the user's input buffer). zcspec's compiler gives
    this model a feature map of 0 bytes as well."""
    model, rec, got = _fm_refreshable_data_to_netoutput()
    expect(model.memory_size, model.zero_copy_size, 'model.memory_size')
    fact(rec.ok and rec.counters.d2d_bytes == 512 and all((v == 1).all() for v in got.values()),
         'rec.ok and rec.counters.d2d_bytes == 512 and all((v == 1).all() for v in got.values())')


@ge_case("davinci_model_unittest.cc")
def copy_input_data_null_tensor():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, copy_input_data_null_tensor): an input of shape {0}
    given DataBuffer(nullptr, 0) on the copy path; GE expects CopyInputData to succeed (a buffer of length 0
    is skipped: nothing is copied). Here the copy path is zero copy off (every input copied), the input a
    float tensor of shape (0,); the call succeeds and copies no byte."""
    b = GraphBuilder("empty_input")
    b.output(b.op("Relu", [b.input("data", (0,))], name="relu"))
    model = build_model(b.build())
    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions(zero_copy=False))
    outs = alloc_outputs(dev, model)
    rec = lm.execute([UserBuffer("data", 0, 0)], outs)
    fact(rec.ok, 'lm.execute([UserBuffer("data", 0, 0)], outs).ok')
    expect(rec.counters.copy_bytes(), 0, "rec.counters.copy_bytes()")


def _neg_chain(name: str, shape: tuple[int, ...]):
    """x -> Neg -> Relu -> NetOutput: a feature map of the ``shape``'s bytes."""
    b = GraphBuilder(name)
    b.output(b.op("Relu", [b.op("Neg", [b.input("x", shape)], name="neg")], name="relu"))
    return build_model(b.build())


@ge_case("davinci_model_unittest.cc")
def static_graph_memory_extend_fail():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, static_graph_memory_extend_fail): policy "2" with
    reuseZeroCopyMemory=1; model 1 (4096 bytes, 1024 of them zero copy) initialises with one feature-map piece
    and its session's ActiveMemoryAllocator holds one block; model 2 (2103296 bytes, more than a 2 MiB page)
    asks the allocator for more while the runtime stub fails ``aclrtMallocWithCfg``, and GE expects Init to
    fail with ACL_ERROR_GE_MEMORY_ALLOCATION. Here both models load into one ``Session("2")`` on a device of
    1 MiB, which has no room for model 2's feature map (4 MiB); GE's sub-memory infos (four pieces) are not
    in zcspec's model file, whose feature map is one piece (docs/runtime-v1.md, Sessions)."""
    session = Session("2")
    opts = LoadOptions(session=session, reuse_zero_copy_memory=1)
    small, large = _neg_chain("model1", (4, 4)), _neg_chain("model2", (1024, 1024))
    fact(large.memory_size > 2 << 20 and small.zero_copy_size > 0, "model 2 needs more than a 2 MiB page")
    dev = Device(small.soc, capacity=1 << 20)
    m1 = load(dev, small, opts)
    expect(len(m1.state.session_memory.ranges), 1, "model 1's GetFmMemoryInfos().size()")
    expect(len(session.allocator(dev).blocks), 1, "the allocator's active_memorys_.size()")
    with refuses(MemoryAllocationError, "model 2's Init (ACL_ERROR_GE_MEMORY_ALLOCATION)") as refused:
        load(dev, large, opts)
    expect(refused.value.code, MemoryAllocationError.code, "model 2's Init")
    m1.unload()


def _widened(name: str, rows: int):
    """x (1x16 float) + w (rows x 16) -> Relu -> ReduceSum over the rows -> NetOutput: a feature map of
    ``rows`` lines beside an I/O region of two 64-byte tensors (1024 bytes, as GE's zero-copy size)."""
    b = GraphBuilder(name)
    x = b.input("x", (1, 16))
    h = b.op("Add", [x, b.weight("w", np.ones((rows, 16), np.float32))], name="add", shape=(rows, 16))
    h = b.op("Relu", [h], name="relu")
    b.output(b.op("ReduceSum", [h], name="sum", axes=(0,), keepdims=1, shape=(1, 16)))
    return build_model(b.build())


@ge_case("davinci_model_unittest.cc")
def no_split_info_om():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, no_split_info_om): policy "2", models without
    sub-memory infos (one feature-map piece, then the zero-copy piece, backed: GE's default); model 1 (4096
    bytes, 1024 zero copy) leaves its session's allocator with two blocks; model 2 (7168, 1024 zero copy)
    needs a block of its own for its feature map (three blocks, another feature-map base); model 3 (2560, no
    zero copy) takes model 2's block (three blocks, model 2's base); each has one feature-map piece (so has
    every zcspec model: its file has no sub-memory infos, session.malloc_feature_map). zcspec backs the I/O
    region only with zero copy off (docs/ge-deviations.md V2), so the models load with ``zero_copy=False``;
    their feature maps are 4096, 7168 and 3072 bytes, their I/O regions 1024."""
    session = Session("2")
    opts = LoadOptions(session=session, zero_copy=False)
    models = [_widened("model1", 24), _widened("model2", 48), _widened("model3", 20)]
    expect([m.zero_copy_size for m in models], [1024] * 3, "the models' zero-copy sizes")
    dev = Device(models[0].soc)
    allocator, loaded = session.allocator(dev), []
    for i, (m, blocks) in enumerate(zip(models, (2, 3, 3))):
        loaded.append(load(dev, m, opts))
        expect(len(allocator.blocks), blocks, f"the allocator's active_memorys_.size() after model {i + 1}")
    m1, m2, m3 = (lm.base("feature_map") for lm in loaded)
    fact(m2 != m1, "model 2's feature map base is not model 1's")
    expect(m3, m2, "model 3's feature map base (model 2's)")
    for lm in loaded:
        lm.unload()


@ge_case("davinci_model_unittest.cc")
def static_graph_memory_no_extend():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, static_graph_memory_no_extend): policy "2"; model 1
    (4096 bytes, 1024 zero copy, four contiguous 1024-byte sub-memory pieces, which MallocFeatureMapMem merges
    into one) leaves two blocks; models 2 (3072) and 3 (2560), no larger, take model 1's memory: still two
    blocks, model 1's feature-map base. Here the feature maps are 4096, 3072 and 2048 bytes, each model with an
    I/O region of 1024 backed (``zero_copy=False``, as in no_split_info_om), which takes the second block."""
    session = Session("2")
    opts = LoadOptions(session=session, zero_copy=False)
    models = [_widened("model1", 24), _widened("model2", 20), _widened("model3", 12)]
    fm = [m.regions["feature_map"] for m in models]
    fact(fm[0] > fm[1] > fm[2], "models 2 and 3 need less memory than model 1, model 3 the least", fm)
    dev = Device(models[0].soc)
    allocator, loaded = session.allocator(dev), []
    for i, m in enumerate(models):
        loaded.append(load(dev, m, opts))
        expect(len(allocator.blocks), 2, f"the allocator's active_memorys_.size() after model {i + 1}")
    bases = [lm.base("feature_map") for lm in loaded]
    expect(bases[1:], bases[:1] * 2, "models 2 and 3's feature-map bases (model 1's)")
    for lm in loaded:
        lm.unload()


@ge_case("davinci_model_unittest.cc")
def split_info_om_no_extend():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, split_info_om_no_extend): no static memory policy
    (""): the models of no_split_info_om's sizes (with sub-memory infos, which then play no part) each get
    feature memory of their own: the session's allocator holds no block, and models 2 and 3 have feature-map
    bases other than model 1's."""
    session = Session("")
    opts = LoadOptions(session=session, zero_copy=False)
    models = [_widened("model1", 24), _widened("model2", 48), _widened("model3", 20)]
    dev = Device(models[0].soc)
    loaded = [load(dev, m, opts) for m in models]
    expect(len(session.allocator(dev).blocks), 0, "the allocator's active_memorys_.size()")
    m1, m2, m3 = (lm.base("feature_map") for lm in loaded)
    fact(m2 != m1 and m3 != m1, "models 2 and 3's feature-map bases are not model 1's")
    for lm in loaded:
        lm.unload()


@ge_case("davinci_model_unittest.cc")
def expandable_memory_allocator():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, expandable_memory_allocator): session 0's
    ExpandableActiveMemoryAllocator on devices 1 and 2; 1024 then 4096 bytes on device 1 (two holders), 2048
    on device 2; GE expects used_memory_size_ 4096 and 2048, still 4096 after device 1's first FreeMemory,
    0 on both after the last, and no active memory left (ActiveMemorySize 0: here, no page mapped and the
    virtual range given back)."""
    sessions = SessionMemAllocator(ExpandableActiveMemoryAllocator, {1: Device(device_id=1), 2: Device(device_id=2)})
    one, two = sessions.get_mem_allocator(0, 1), sessions.get_mem_allocator(0, 2)
    fact(one is not two, "one allocator per device")
    for allocator, size in ((one, 1024), (two, 2048), (one, 4096)):
        fact(allocator.malloc_memory("test", size), f"MallocMemory(\"test\", {size}) != nullptr")
    expect((one.used_memory_size, two.used_memory_size), (4096, 2048), "used_memory_size_ of the two")
    two.free_memory()
    one.free_memory()
    expect(one.used_memory_size, 4096, "device 1's used_memory_size_ with one holder left")
    one.free_memory()
    expect((one.used_memory_size, two.used_memory_size), (0, 0), "used_memory_size_ of the two")
    expect((one.mapped_pages, two.mapped_pages, one.base, two.base), (0, 0, None, None),
           "the active memory left (pages mapped, reserved ranges)")


def _pg_type(allocator) -> str:
    """The page type its physical pool asks the driver for (GE's ``prop_.pg_type``): 1G for 1 GiB pages until
    the driver refused one (``MallocPhysicalPage`` then retries, and keeps asking, with 2M), else 2M."""
    pool = allocator.pool
    last = next(p for p in reversed(pool.pages) if p is not None)
    huge = pool.page_size == DRV_1G_PAGE and not pool.fell_back_to_2m and last.addr % DRV_1G_PAGE == 0
    return "1G" if huge else "2M"


def _expandable(dev, page_size=None):
    sessions = SessionMemAllocator(ExpandableActiveMemoryAllocator, {dev.device_id: dev})
    return sessions.get_mem_allocator(0, dev.device_id, "hbm", page_size or DRV_1G_PAGE)


@ge_case("davinci_model_unittest.cc")
def ExpandableActiveMemoryAllocator_Use1GSuccess_CheckPgType():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, ExpandableActiveMemoryAllocator_Use1GSuccess_CheckPgType):
    an expandable allocator of 1 GiB pages backs 4096 bytes with a page of pg_type 1G; one of the default
    page size (2 MiB) backs an incremental 1024 bytes with pg_type 2M. A caller's allocation at the start of
    device 1 makes a 1G page (1 GiB-aligned) and a 2M one land apart."""
    dev = Device(device_id=1, poison=False)
    occupant = dev.malloc(4096, tag="occupant")
    huge = _expandable(dev)
    fact(huge.malloc_memory("test", 4096), 'MallocMemory("test", 4096) != nullptr')
    expect(_pg_type(huge), "1G", "pg_type of the 1 GiB allocator's page")
    huge.free_memory()
    dev.free(occupant)
    small = _expandable(Device(device_id=2, poison=False), DRV_PAGE)
    fact(small.malloc_memory("test", 1024, incremental=True), 'MallocMemory("test", 1024, true) != nullptr')
    expect(_pg_type(small), "2M", "pg_type of the default allocator's page")
    small.free_memory()


@ge_case("davinci_model_unittest.cc")
def ExpandableActiveMemoryAllocator_Use1GMallocSuccessThenFailed():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, ExpandableActiveMemoryAllocator_Use1GMallocSuccessThenFailed):
    1 GiB pages; the first incremental gigabyte gets a 1G page, the driver refuses the second 1G page and
    MallocPhysicalPage retries with pg_type 2M, which succeeds. Here the driver's refusal is a device of
    2.5 GiB on which a caller's allocation right after the first page leaves no 1 GiB-aligned gigabyte."""
    dev = Device(device_id=1, capacity=(2 << 30) + (512 << 20), poison=False)
    allocator = _expandable(dev)
    fact(allocator.malloc_memory("test", 1 << 30, incremental=True), "the first gigabyte's address != nullptr")
    expect(_pg_type(allocator), "1G", "pg_type of the first page")
    occupant = dev.malloc(4096, tag="occupant")
    fact(allocator.malloc_memory("test", 1 << 30, incremental=True), "the second gigabyte's address != nullptr")
    expect((_pg_type(allocator), allocator.mapped_pages), ("2M", 2), "pg_type of the second page, pages mapped")
    allocator.free_memory()
    dev.free(occupant)


@ge_case("davinci_model_unittest.cc")
def ExpandableActiveMemoryAllocator_Use1GMallocFailed_NotSupport():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, ExpandableActiveMemoryAllocator_Use1GMallocFailed_NotSupport):
    1 GiB pages on a driver that refuses every 1G page: an incremental 20480 bytes get one page of 1 GiB asked
    for with pg_type 2M. Here: a device of 1.5 GiB whose first bytes a caller holds (no 1 GiB-aligned
    gigabyte)."""
    dev = Device(device_id=1, capacity=(1 << 30) + (512 << 20), poison=False)
    occupant = dev.malloc(4096, tag="occupant")
    allocator = _expandable(dev)
    fact(allocator.malloc_memory("test", 20480, incremental=True), 'MallocMemory("test", 20480, true) != nullptr')
    expect((_pg_type(allocator), allocator.pool.page_size, allocator.mapped_pages), ("2M", DRV_1G_PAGE, 1),
           "pg_type, the size asked for, pages mapped")
    allocator.free_memory()
    dev.free(occupant)


@ge_case("davinci_model_unittest.cc")
def static_graph_memory_outer_alloc():
    """davinci_model_unittest.cc TEST_F(UtestDavinciModel, static_graph_memory_outer_alloc): policy "2" with
    reuseZeroCopyMemory=1, and the caller's own 4096 bytes of feature memory (``ModelParam.mem_base``); GE
    expects Init to succeed with one feature-map piece and the session's ActiveMemoryAllocator to hold no
    block (MallocFeatureMapMem runs only without the caller's memory). Here the caller's work memory is as
    large as the model's memory size; the feature map is placed at its start."""
    session = Session("2")
    model = _widened("model1", 24)
    dev = Device(model.soc)
    work = dev.malloc(model.memory_size, tag="caller work memory")
    lm = load(dev, model, LoadOptions(session=session, reuse_zero_copy_memory=1), work=(work, model.memory_size))
    expect(len(session.allocator(dev).blocks), 0, "the allocator's active_memorys_.size()")
    expect(lm.base("feature_map"), work, "the feature map's base (the caller's memory)")
    lm.unload()
    dev.free(work)
