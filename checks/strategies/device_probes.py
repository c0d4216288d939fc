"""Device probes: random programs of mallocs, frees and accesses, run on a fresh emulated device.

A program is a tuple of JSON steps (it travels in a ``device`` scenario's ``runtime["program"]``):

- ``{"op": "malloc", "size": n, "read_only": bool}``: handle k is the k-th malloc;
- ``{"op": "free", "handle": k}``;
- ``{"op": "read" | "write", "via": "kernel" | "memset", "handle": k | None, "offset": o, "nbytes": n}``:
  one task touching ``n`` bytes at handle k's address + ``o`` (at address ``o`` itself when the
  handle is None: an offset mistaken for an address). A kernel read copies the bytes into a
  scratch allocation, a kernel write copies scratch into them (MemcpyAsync, uint8 slots); a
  memset write is an atomic-clean task.

The accesses aim in bounds, past the end of an allocation (by 1 to 64 bytes mostly, the slack a
loosened check might allow), just before its start, into freed memory, outside device memory,
at zero bytes, and write read-only allocations. Each runs as its own launch and synchronize, so
a refused one leaves the next unaffected. Which were legal is not recorded here: the spec derives
it from the trace's allocations (DEVICE-BOUNDS).

``programs()`` draws programs for Hypothesis; ``fixed_programs(count, seed)`` is the seeded set
``zcspec verify`` runs; ``observe_probe(scenario)`` runs one and transcribes the trace.
"""
from __future__ import annotations

import contextlib

import random

from hypothesis import strategies as st

from zcspec.checks.errors import ScenarioError
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.device import SLOT_BYTES, Device, DeviceFault, KernelTask, MemsetTask, Slot
from zcspec.impl.device.observe import observe_device

PROBE_GRAPH = Graph("device_probe", [], [], [])   # a device scenario's graph: a probe compiles nothing
_UNMAPPED = (0, 16, 0x1000, 1 << 40)              # offsets, not device addresses
_TARGETS = ("inside", "inside", "past_end", "past_end", "before_start", "freed", "unmapped", "zero")


def _size(rng: random.Random) -> int:
    return rng.choice([rng.randint(1, 64), rng.randint(65, 2048), 512 * rng.randint(1, 4)])


def _access(rng: random.Random, sizes: list[int], live: list[int], freed: list[int]) -> dict:
    target = rng.choice([t for t in _TARGETS if t != "freed" or freed])
    write = rng.random() < 0.5
    h = rng.choice(freed if target == "freed" else live)
    size = sizes[h]
    if target in ("inside", "freed"):
        offset = rng.randrange(size)
        nbytes = rng.randint(1, size - offset)
    elif target == "past_end":
        offset = rng.randrange(size)
        nbytes = size - offset + (rng.randint(1, 64) if rng.random() < 0.8 else rng.randint(65, 1024))
    elif target == "before_start":
        offset = -rng.randint(1, 64)
        nbytes = rng.randint(1, 64)
    elif target == "unmapped":
        h, offset, nbytes = None, rng.choice(_UNMAPPED), rng.randint(1, 64)
    else:
        offset, nbytes = rng.randrange(size), 0
    via = rng.choice(["kernel", "memset"]) if write else "kernel"
    return {"op": "write" if write else "read", "via": via, "handle": h, "offset": offset, "nbytes": nbytes}


def program(rng: random.Random, steps: int) -> tuple[dict, ...]:
    """A probe program of about ``steps`` steps drawn with ``rng`` (see the module doc)."""
    out: list[dict] = []
    sizes: list[int] = []
    live: list[int] = []
    freed: list[int] = []
    for _ in range(steps):
        r = rng.random()
        if not live or r < 0.2:
            sizes.append(_size(rng))
            live.append(len(sizes) - 1)
            out.append({"op": "malloc", "size": sizes[-1], "read_only": rng.random() < 0.25})
        elif r < 0.3 and len(live) > 1:
            h = live.pop(rng.randrange(len(live)))
            freed.append(h)
            out.append({"op": "free", "handle": h})
        else:
            out.append(_access(rng, sizes, live, freed))
    h = live[0]   # always one access that must run and one that must not
    out.append({"op": "read", "via": "kernel", "handle": h, "offset": 0, "nbytes": sizes[h]})
    out.append({"op": "write", "via": "kernel", "handle": h, "offset": 0, "nbytes": sizes[h] + 1})
    return tuple(out)


def programs(min_steps: int = 4, max_steps: int = 32) -> st.SearchStrategy[tuple[dict, ...]]:
    """Probe programs of ``min_steps`` to ``max_steps`` drawn steps (plus the two closing accesses)."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"programs(min_steps={min_steps!r}, max_steps={max_steps!r}): need 1 <= min <= max")
    return st.builds(program, st.randoms(use_true_random=False), st.integers(min_steps, max_steps))


def fixed_programs(count: int = 8, seed: int = 0, steps: int = 32) -> list[tuple[dict, ...]]:
    """``count`` programs drawn from seeds ``seed``, ``seed + 1``, ...: the same set on every run."""
    return [program(random.Random(seed + i), steps) for i in range(count)]


# -- running one ----------------------------------------------------------------------------------

def _bad(i: int, why: str) -> ScenarioError:
    return ScenarioError(f"device probe step {i}: {why}", key=f"runtime.program[{i}]")


def _int(step: dict, i: int, key: str, *, low: int | None = None) -> int:
    v = step.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or (low is not None and v < low):
        raise _bad(i, f"{key}={v!r} must be an int" + (f" >= {low}" if low is not None else ""))
    return v


def _address(step: dict, i: int, handles: list[int]) -> int:
    h, offset = step.get("handle"), _int(step, i, "offset")
    if h is None:
        return offset
    if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < len(handles):
        raise _bad(i, f"handle={h!r} names no earlier malloc (there are {len(handles)})")
    return handles[h] + offset


def _task(i: int, step: dict, args: int, scratch: int, address: int):
    """The task of an access step and the addresses of its slots."""
    n = _int(step, i, "nbytes", low=0)
    op, via = step.get("op"), step.get("via")
    if via == "memset" and op == "write":
        return MemsetTask(f"probe {i} memset", args=args, slots=(Slot("out", (n,), "uint8"),)), [address]
    if via != "kernel":
        raise _bad(i, f"via={via!r} must be 'kernel' (or 'memset' for a write)")
    task = KernelTask(f"probe {i} {op}", "MemcpyAsync", args, (Slot("in", (n,), "uint8"), Slot("out", (n,), "uint8")))
    return task, ([address, scratch] if op == "read" else [scratch, address])


def run_program(steps, soc: str = "ascend910b") -> Device:
    """A fresh device (trace from position 0) after running ``steps``; ScenarioError names a bad step."""
    if not isinstance(steps, (list, tuple)):
        raise ScenarioError(f"device probe program must be a list of steps, got {type(steps).__name__}",
                            key="runtime.program")
    dev = Device(soc)
    largest = max([s.get("nbytes", 0) for s in steps if isinstance(s, dict) and isinstance(s.get("nbytes"), int)] + [1])
    args = dev.malloc(2 * SLOT_BYTES, tag="probe argument table")
    scratch = dev.malloc(largest, tag="probe scratch")
    handles: list[int] = []
    for i, step in enumerate(steps):
        op = step.get("op") if isinstance(step, dict) else None
        if op == "malloc":
            size = _int(step, i, "size", low=1)
            handles.append(dev.malloc(size, tag=f"probe {len(handles)}", read_only=bool(step.get("read_only"))))
        elif op == "free":
            dev.free(_address({**step, "offset": 0}, i, handles))
        elif op in ("read", "write"):
            task, slots = _task(i, step, args, scratch, _address(step, i, handles))
            # A refusal is recorded in the trace (a refused argument table too), where the spec judges it.
            with contextlib.suppress(DeviceFault):
                dev.write_args(task, slots)
                dev.launch(task)
                dev.synchronize()
        else:
            raise _bad(i, f"op={op!r} must be one of malloc, free, read, write")
    return dev


def observe_probe(scenario) -> list:
    """The observation of a ``device`` scenario: its program run on a fresh device of its SoC."""
    program_ = scenario.runtime.get("program")
    dev = run_program(program_, scenario.compile.soc)
    return [observe_device(dev.trace, 0, name=f"device probe of {len(program_)} steps",
                           memory=(dev.mem.base, dev.mem.capacity))]
