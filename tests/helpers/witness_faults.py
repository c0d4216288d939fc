"""Faults planted where runtime v1/v2 (or its own record) and the device trace part ways (issue 35): each
is a context-manager factory for tests/spec/test_claims_read_the_witness.py, which shows the claim that
reads the device's witness sees it, and test_claims_read_the_witness_verify.py, which runs verify under it."""
from __future__ import annotations

import contextlib

import attrs

from zcspec.checks.faults.variant import swap
from zcspec.impl.device import SLOT_BYTES


def _atomic_clean_dropped():
    """Runtime v1 never launches the memset tasks (the atomic clean of ReduceSum's output)."""
    return swap("zcspec.impl.runtime.branches", "launches",
                lambda launches: lambda task, batch: task.kind != "memset" and launches(task, batch))


def _table_stomped_after_launch():
    """Between the runtime's launch and the device running it, something writes the model's last task's
    slot 0 over with its slot 1 (as a kernel writing past its output into an argument table would): no
    ArgWrite shows it, so only what the device read when it ran the task can."""
    from zcspec.impl.device import executor
    from zcspec.impl.device.trace import ArgWrite

    def make(execute):
        def stomped(dev, task, token, sid):
            last = [e.task for e in dev.trace.of_type(ArgWrite) if not e.refresh]
            if last and task.name == last[-1] and len(task.slots) > 1:
                table = dev.mem.u8[dev.mem.check(task.args, 2 * SLOT_BYTES, write=True):][:2 * SLOT_BYTES]
                table[:SLOT_BYTES] = table[SLOT_BYTES:].copy()
            return execute(dev, task, token, sid)
        return stomped
    return swap(executor.__name__, "execute", make)


@contextlib.contextmanager
def _kernel_launches_counted_twice():
    """The device counts each kernel launch twice (the trace still shows one launch)."""
    from zcspec.impl.device import executor
    saved = dict(executor.RUNNERS)

    def twice(run):
        def counted(dev, task, token, sid):
            run(dev, task, token, sid)
            dev.tally.kernel_launches += 1
        return counted
    executor.RUNNERS.update({k: twice(saved[k]) for k in ("kernel", "memcpy", "memcpy_addr")})
    try:
        yield
    finally:
        executor.RUNNERS.update(saved)


def _io_region_allocated_but_reported_unbacked():
    """Under reuseZeroCopyMemory runtime v1 allocates the I/O region (and points the tasks at it) while its
    region bases say the region is unbacked."""
    def make(place):
        def placed(device, model, opts, io, own, work, weight):
            bases, feature_map, user_ranges = place(device, model, opts, io, own, work, weight)
            if opts.reuse_zero_copy_memory and not bases.zero_copy_backed:
                bases = attrs.evolve(bases, zero_copy=own(model.zero_copy_size, "I/O region"))
            return bases, feature_map, user_ranges
        return placed
    return swap("zcspec.impl.runtime.v1.load", "_place_regions", make)


def _trust_pass(rewrite):
    """Runtime v2's TrustOutTensor pass replaced by ``rewrite(graph)``."""
    def make(pipeline):
        return tuple((name, (lambda g, o: rewrite(g)) if name == "TrustOutTensor" else fn, on)
                     for name, fn, on in pipeline)
    return lambda: swap("zcspec.impl.runtime.v2.passes", "PIPELINE", make)


_ensure_kept = _trust_pass(lambda graph: graph)
_every_ensure_removed = _trust_pass(lambda graph: graph.without(
    {n.name for n in graph.of_type("EnsureTensorAtOutMemory")}))
