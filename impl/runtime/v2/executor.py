"""The stream executor: a lowered model loaded on a device, executed once per ``execute`` call.

    exe = load_stream_executor(model_bytes, LoweringOptions(), device=dev)
    outs = exe.execute([Tensor(addr=x, size=nx)], [Tensor(addr=y, size=ny)])
    exe.unload()

Load (``StreamExecutor.__init__``): lower the model (lowering.py), run the passes
(passes/), check every node has a kernel, upload the weights (read-only) and allocate the
fixed region and one argument-table arena, create the device streams the tasks use and,
unless ``always_external_allocator``, the caching allocator (GE: api.cc `AllocatorFactory::Create`).

Execute: one call at a time per executor (a lock: the frame, the caching allocator and the
record of a call are the executor's, so calls from several threads run one after another, as
v1's do behind its device lock); run the graph's nodes in order (each a kernel from ``kernels.KERNELS``), then
synchronize the device. Contract on failure (a bad buffer, a missing allocator, a device
fault): pending tasks are dropped (as a stream abort would), every block the graph still
holds is released, the caller's tensors are restored to what they were, the error is
logged for observation and re-raised. Validation that needs only the caller's tensors
runs first in the graph (SplitTensorForOutputData is hoisted), so those failures happen
before any allocation or launch.
"""
from __future__ import annotations

import threading
import weakref
from collections import deque

import attrs

from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.device import Device, DeviceFault, EventRecordTask, EventWaitTask, HcclTask, KernelTask, MemsetTask, Slot
from zcspec.impl.device.tasks import SLOT_BYTES
from zcspec.impl.platform import dtypes, storage
from zcspec.impl.runtime import branches
from zcspec.impl.runtime.record import ExecutionRecord, GivenBuffer
from zcspec.impl.runtime.v2.allocators import CachingAllocator
from zcspec.impl.runtime.v2.errors import ApiMisuseError, ExeGraphError, OutputBufferError, RuntimeV2Error
from zcspec.impl.runtime.v2.frame import Frame, RtEvent
from zcspec.impl.runtime.v2.kernels import KERNELS
from zcspec.impl.runtime.v2.kernels.outputs import every_bad_output
from zcspec.impl.runtime.v2.lowering import lower
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.passes import run_passes


RECORDS_KEPT = 64  # the last executions kept for observation (a serving loop must not grow without bound)


def _device_task(task, args: int):
    slots = [Slot(s.role, s.shape, s.dtype) for s in task.slots]
    name = f"{task.kind}/{task.node}"
    if task.kind == "memset":
        return MemsetTask(name=name, args=args, slots=slots, attrs=task.attrs, in_loop=task.in_loop)
    if task.kind == "hccl":
        return HcclTask(name=name, op_type=task.op_type, args=args, slots=slots, attrs=task.attrs, in_loop=task.in_loop)
    return KernelTask(name=name, op_type=task.op_type, args=args, slots=slots, attrs=task.attrs, in_loop=task.in_loop)


class StreamExecutor:
    """A model loaded into runtime v2 on ``device`` (see the module docstring)."""

    def __init__(self, model, device: Device | None = None, options: LoweringOptions = LoweringOptions()):
        self.model, self.options = model, options
        self.device = device if device is not None else Device(model.soc)
        if self.device.soc.name != model.soc:
            raise ApiMisuseError(f"model {model.name!r} was compiled for SoC {model.soc!r}, the device is "
                             f"{self.device.soc.name!r}; compile it for this SoC")
        self.graph_before = lower(model, options)
        self.graph = run_passes(self.graph_before, options)
        unknown = [n for n in self.graph.nodes if n.type not in KERNELS]
        if unknown:
            raise ExeGraphError(f"no kernel {unknown[0].type!r}", node=unknown[0].name)
        self.log: list[RtEvent] = []
        self.records: deque[ExecutionRecord] = deque(maxlen=RECORDS_KEPT)
        self.closed = False
        self._lock = threading.RLock()
        self.load_begin = len(self.device.trace)
        self._owned: list[int] = []
        try:
            self._load()
        except BaseException:
            self._free_owned()
            raise
        self.load_end = len(self.device.trace)

    # -- load --------------------------------------------------------------------

    def _load(self) -> None:
        dev, model = self.device, self.model
        self._regions = {}
        for region, read_only in (("weight", True), ("fixed", False)):
            size = model.regions.get(region, 0)
            if size:
                self._regions[region] = self._malloc(size, f"{model.name} {region}", read_only)
        for w in model.weights:
            self._upload_weight(w)
        n_slots = sum(len(t.slots) for t in model.tasks.tasks)
        arena = self._malloc(SLOT_BYTES * max(n_slots, 1), f"{model.name} args", False)
        self._tasks, offset = [], 0
        for t in model.tasks.tasks:
            self._tasks.append(_device_task(t, arena + SLOT_BYTES * offset))
            offset += len(t.slots)
        used = sorted({n.attr("stream", 0) for n in self.graph.nodes if n.type.startswith("Launch")} | {0})
        self._streams = {s: (0 if s == 0 else dev.create_stream()) for s in used}
        self.multi_stream = len(used) > 1
        external_only = self.options.always_external_allocator  # the executor creates no allocator (LoweringOption)
        self.allocator = None if external_only else CachingAllocator(dev, name=f"{model.name} hbm")
        if self.allocator is not None:
            self.allocator.listener = _weakly(self._on_block)

    def _malloc(self, size: int, tag: str, read_only: bool) -> int:
        addr = self.device.malloc(size, tag=tag, read_only=read_only)
        self._owned.append(addr)
        return addr

    def _upload_weight(self, w) -> None:
        nbytes = dtypes.nbytes(w.shape, w.dtype)
        if not nbytes or not w.data:
            return
        data = storage.image(w.data, w.shape, w.dtype, w.splat)  # a splat broadcasts its one element
        host = self.device.host_malloc(nbytes, tag=f"staging {w.name}")
        try:
            self.device.host_write(host, data[:nbytes])
            self.device.memcpy(self._regions["weight"] + w.offset, host, nbytes, "h2d")
        finally:
            self.device.host_free(host)

    def _on_block(self, what: str, block) -> None:
        if not self.device.trace.enabled:  # no trace, nothing to observe: keep long runs flat
            return
        purpose = block.tag
        self.log.append(RtEvent(len(self.device.trace), what, block.addr, block.size, block.io or None, purpose))

    # -- what kernels ask of the loaded model -------------------------------------------

    def region_base(self, region: str) -> int:
        return self._regions[region]

    def device_task(self, index: int):
        return self._tasks[index]

    def stream(self, logical: int) -> int:
        return self._streams[logical]

    def join_streams(self) -> None:
        """Make stream 0 wait for everything launched on the other streams so far."""
        for logical, sid in self._streams.items():
            if sid:
                event = self.device.create_event()
                self.device.launch(EventRecordTask(f"join {logical} record", event), sid)
                self.device.launch(EventWaitTask(f"join {logical} wait", event), 0)

    # -- execute -----------------------------------------------------------------

    def execute(self, inputs, outputs, *, allocators: dict | None = None, batch: str | None = None) -> list:
        """Run the model once; returns the output tensors (created ones included). See the module docstring.

        ``batch`` chooses the dynamic-batch branch (runtime/branches.py): required, and one of the model's
        labels, when the model has branches; a bad choice is an ApiMisuseError before anything runs."""
        with self._lock:
            return self._execute(inputs, outputs, allocators, batch)

    def _execute(self, inputs, outputs, allocators, batch) -> list:
        if self.closed:
            raise ApiMisuseError(f"model {self.model.name!r} was unloaded")
        t = self.model.tasks
        if len(inputs) != len(t.inputs) or len(outputs) != len(t.outputs):
            raise ApiMisuseError(f"model {self.model.name!r} has {len(t.inputs)} inputs and {len(t.outputs)} outputs, "
                             f"the call passed {len(inputs)} and {len(outputs)}")
        if why := branches.problem(self.model.name, branches.labels(t), batch):
            raise ApiMisuseError(why)
        outputs = list(outputs)
        before = [None if o is None else attrs.evolve(o) for o in outputs]
        external = dict(allocators or {})
        for a in external.values():
            a.listener = _weakly(self._on_block)
        frame = Frame(self, list(inputs), outputs, external, batch)
        begin, log_begin, counters, error = len(self.device.trace), len(self.log), self.device.counters, None
        try:
            self._run(frame)
        except BaseException as e:
            error = self._abort(frame, outputs, before, e)
            if error is e:
                raise
            raise error from e
        finally:
            end = len(self.device.trace)
            self.records.append(ExecutionRecord(
                (begin, end), _given(inputs, t.inputs) + _given(before, t.outputs), self.device.counters - counters,
                dict(frame.io_addresses), error, log=(log_begin, len(self.log)),
                handed=dict(frame.handed)))
        return outputs

    def _run(self, frame: Frame) -> None:
        values = frame.values
        for node in self.graph.nodes:
            args = [values[e.node][e.index] for e in node.inputs]
            values[node.name] = KERNELS[node.type](frame, node, args)
        self.device.synchronize()
        frame.release_all()

    def _abort(self, frame: Frame, outputs: list, before: list, error: BaseException) -> BaseException:
        """Undo a failed execution; returns the exception to raise (see the module docstring).

        Under ge_compat the tasks already launched still run, as GE's device runs what the host
        launched before a kernel reported an error: a fault they cause (an output buffer shared
        without a size check and written past its end: GE's model_outputs.cc `AllocModelOutTensor`, memory_copy.cc
        `EnsureTensorAtOutMemory`) is what surfaces.
        Otherwise they are dropped (a stream abort) and nothing the call launched touches memory.
        """
        ours = isinstance(error, RuntimeV2Error)
        culprit = (error.io_key or error.culprit) if ours else None
        code = error.code if ours else type(error).__name__
        frame.log("error", io=culprit or None, message=str(error), code=code)
        if isinstance(error, OutputBufferError):
            for other in every_bad_output(self.graph, frame.outputs):
                if other.index != error.index:
                    frame.log("error", io=other.io_key, message=str(other), code=other.code)
        raised = error
        if self.options.ge_compat and not isinstance(error, DeviceFault):
            try:
                self.device.synchronize()
            except DeviceFault as fault:
                raised = fault
        self.device.streams.clear()  # a stream abort: what was launched but not run is dropped
        frame.release_all()
        for now, old in zip(outputs, before):
            if now is not None and old is not None and now.owned is not old.owned:
                now.release()
                now.addr, now.size, now.placement, now.owned = old.addr, old.size, old.placement, old.owned
                now.shape, now.dtype = old.shape, old.dtype
        return raised

    # -- unload ------------------------------------------------------------------

    def unload(self) -> None:
        """Free what the load allocated and close the allocator (blocks the caller still owns stay valid)."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if self.allocator is not None:
                self.allocator.close()
            self._free_owned()
            self.log.append(RtEvent(len(self.device.trace), "unload"))

    def _free_owned(self) -> None:
        for addr in self._owned:
            self.device.free(addr)
        self._owned = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unload()


def _weakly(method):
    """``method`` (a bound method) as a listener that does not keep its object alive. The allocator the
    executor owns calls it: a plain bound method made the two a reference cycle, so a finished executor,
    its device and the device's 16 GiB reservation of address space waited for the cycle collector (one
    verify of the node tests left 1,534 address spaces to it). Gone, its object's log is nobody's."""
    ref = weakref.WeakMethod(method)

    def listener(what: str, block) -> None:
        bound = ref()
        if bound is not None:
            bound(what, block)
    return listener


def _given(tensors, ios) -> tuple[GivenBuffer, ...]:
    """The caller's tensors as buffers of I/O ``ios`` (a missing tensor is a null buffer)."""
    return tuple(GivenBuffer(io.role, io.index, 0, 0) if x is None else GivenBuffer(io.role, io.index, x.addr, x.size,
                                                                                      x.placement)
                 for x, io in zip(tensors, ios))


def load_stream_executor(model_bytes: bytes, options: LoweringOptions = LoweringOptions(), *,
                         device: Device | None = None) -> StreamExecutor:
    """Validate ``model_bytes`` (a .zcm file), lower it with ``options`` and load it on ``device``."""
    return StreamExecutor(load_model(model_bytes), device, options)
