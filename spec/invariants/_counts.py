"""A call's counts as the spec recounts them from its trace, and the counters a device reports in the same
terms: what EXEC-COUNTERS-TRUE compares (spec/invariants/execution.py), and what ``zcspec run --json``'s
counters are held to (tests/runtime_v1/test_cli_counts.py)."""
from __future__ import annotations

from zcspec.spec.invariants._shadow import refused
from zcspec.spec.invariants._trace import all_events, call_events
from zcspec.spec.observables.execution import ADDR_BYTES, ExecutionObservation

COPY_DIRECTIONS = ("h2d", "d2h", "d2d", "h2h")

# Which launch counter a task of each model-file kind adds to: the copy tasks GE builds as kernels
# (MemcpyAsync, MemcpyAddrAsync) launch as kernels; an atomic clean is a memset of its output ranges.
LAUNCH_COUNTERS = {"kernel": "kernel_launches", "memcpy": "kernel_launches", "memcpy_addr": "kernel_launches",
                   "memset": "memset_calls", "hccl": "hccl_launches"}


def _spaces(obs: ExecutionObservation) -> list[tuple[int, int, str]]:
    """``(start, end, space)`` of every allocation the load's and the call's traces show and of every user
    buffer (its placement): an address lies in the space of whatever holds it (address spaces are disjoint)."""
    out = [(e.address, e.address + e.size, e.space) for e in all_events(obs)
           if e.kind == "alloc" and e.address is not None and e.size and e.space is not None]
    return out + [(b.address, b.address + b.size, b.placement) for b in obs.buffers if b.address and b.size > 0]


def _space_of(spaces: list[tuple[int, int, str]], address: int | None) -> str | None:
    hit = {space for lo, hi, space in spaces if address is not None and lo <= address < hi}
    return hit.pop() if len(hit) == 1 else None


def trace_counts(obs: ExecutionObservation) -> dict[str, int]:
    """The call's counts as the spec recomputes them from its trace: per direction, the calls and bytes of its
    copies, each direction taken from the address spaces of the memory the copy reads and writes (the trace's
    allocations and the user buffers' placement; the copy's own label only where a side lies in neither);
    ``launches``, the launches the device ran (not those it refused); ``arg_writes`` and ``args_bytes``,
    the argument slots written."""
    spaces = _spaces(obs)
    counts = {f"{d}_{k}": 0 for d in COPY_DIRECTIONS for k in ("calls", "bytes")}
    events = call_events(obs)
    for e in events:
        if e.kind != "copy" or not e.size:
            continue
        src, dst = _space_of(spaces, e.src), _space_of(spaces, e.dst)
        d = f"{src[0]}2{dst[0]}" if src and dst else e.direction
        if d not in COPY_DIRECTIONS:   # no label and no known memory on some side: nothing says which
            counts["unplaced_copies"] = counts.get("unplaced_copies", 0) + 1
            continue
        counts[f"{d}_calls"] += 1
        counts[f"{d}_bytes"] += e.size
    counts.setdefault("unplaced_copies", 0)
    launched = [e for i, e in enumerate(events) if e.kind == "launch" and not refused(events, i)]
    counts["launches"] = len(launched)
    kinds = {t.id: t.kind for t in obs.load.tasks}
    if kinds and all(kinds.get(e.task) in LAUNCH_COUNTERS for e in launched):
        for counter in set(LAUNCH_COUNTERS.values()):
            counts[counter] = sum(1 for e in launched if LAUNCH_COUNTERS[kinds[e.task]] == counter)
        counts["memset_bytes"] = sum(r.size for e in launched if kinds[e.task] == "memset" for r in e.writes)
    counts["arg_writes"] = sum(1 for e in events if e.kind == "arg_write")
    counts["args_bytes"] = ADDR_BYTES * counts["arg_writes"]
    return counts


def reported_counts(counters: dict[str, int]) -> dict[str, int]:
    """The counters a device (or ``zcspec run --json``) reports, in :func:`trace_counts`' terms."""
    out = {f"{d}_{k}": counters.get(f"{d}_{k}", 0) for d in COPY_DIRECTIONS for k in ("calls", "bytes")}
    out["launches"] = sum(counters.get(k, 0) for k in ("kernel_launches", "hccl_launches", "memset_calls"))
    out.update({k: counters[k] for k in (*LAUNCH_COUNTERS.values(), "memset_bytes") if k in counters})
    out["arg_writes"] = counters.get("args_written", 0) + counters.get("args_refreshed", 0)
    out["args_bytes"] = counters.get("args_bytes", 0)
    out["unplaced_copies"] = 0
    return out

