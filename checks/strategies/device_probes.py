"""Device probes: random programs of mallocs, frees and accesses, run on a fresh emulated device.

A program is a tuple of JSON steps (it travels in a ``device`` scenario's ``runtime["program"]``):

- ``{"op": "malloc", "size": n, "read_only": bool, "align": a}`` (``align`` optional): handle k is the k-th
  malloc (one the device refused, out of memory or for its arguments, names nothing: a later step aiming
  at it is skipped);
- ``{"op": "free", "handle": k, "offset": o}``: a free of handle k's address + ``o`` (``o`` defaults to 0;
  the address ``o`` itself when the handle is None). A refused one (double or invalid free) is in the
  trace, as is a refused malloc;
- ``{"op": "read" | "write", "via": "kernel" | "memset" | "copy", "handle": k | None, "offset": o, "nbytes": n}``:
  one task (or copy) touching ``n`` bytes at handle k's address + ``o`` (at address ``o`` itself when the
  handle is None: an offset mistaken for an address). A kernel read copies the bytes into a
  scratch allocation, a kernel write copies scratch into them (MemcpyAsync, uint8 slots); a
  memset write is an atomic-clean task; a ``"via": "copy"`` access is no task but a synchronous
  device-to-device copy by the host (``Device.memcpy(dst, src, n, "d2d")``): a read copies the
  bytes into the scratch allocation, a write copies scratch into them. No probe copies from or to
  host memory: the one write read-only memory accepts, a synchronous host-to-device copy at load,
  is not drawn (a copy's write into a read-only allocation is illegal);
- ``{"op": "compute", "kernel": op, "a": shape, "b": shape, "out": shape, "dtype": d}``: a kernel task
  of op type ``op`` (Add, Sub, Mul) with two input slots and one output slot of those shapes, all of
  dtype ``d``, each in a fresh allocation of its byte size (not a handle); without ``b``, a one-input
  kernel (Expand, whose output shape is the target). The host fills the inputs
  with element-varying bytes and the output with 0x5A bytes (``Device.memset``), then launches it.

The accesses aim in bounds, past the end of an allocation (by 1 to 64 bytes mostly, the slack a
loosened check might allow), just before its start, into freed memory, outside device memory,
at zero bytes, and write read-only allocations. Each runs as its own launch and synchronize, so
a refused one leaves the next unaffected. Which were legal is not recorded here: the spec derives
it from the trace's allocations (DEVICE-BOUNDS).

After the accesses come compute steps: at least one whose input shapes broadcast to its output
shape (it must run), one whose inputs do not broadcast and one whose output shape is not their
broadcast shape (both must be refused), in random order. A refused kernel leaves nothing in the
trace, so the probe records each compute step's outcome itself (``KernelRun``: what the device API
raised, the input bytes, the output bytes before and after); any exception that is not a
``DeviceError`` propagates, a crash of the probe. Which were legal is again the spec's to derive,
from the shapes (DEVICE-KERNEL-REFUSAL). Appended last, they leave the earlier draws of a seed as
they were.

Then come one or two collective steps, ``{"op": "collective", "kernel": op, "ranks": n, "shape": s,
"dtype": "float32", "reduction": r, "root": k}`` (op HcomAllReduce, HcomAllGather or HcomBroadcast over
2 to 4 ranks): the probe's device is rank 0 of a fresh communicator with n - 1 fresh peer devices;
each rank's input is filled with its own element-varying bytes and its output with 0x5A bytes, every
rank launches the collective and rank 0 synchronizes (pulling its peers). The probe records every
rank's input and output bytes (``CollectiveRun``); what each rank must hold is the spec's to compute
(DEVICE-COLLECTIVE). No verify model runs a collective over more than one device. Last, two Expand
steps: one whose input broadcasts to its output shape and one with an axis one longer.

Then the oracle steps, ``{"op": "oracle", "kernel": op, "inputs": [{"shape", "dtype", "index"}, ...],
"outs": [{"shape", "dtype"}, ...], "attrs": {...}, "opset": n}``: a kernel of any op, its inputs in fresh
allocations filled with element-varying bytes (integers small: 0 to 9), its outputs with 0x5A bytes, its
attributes as the IR keeps them (``_``-prefixed ones, such as ``_present_inputs``, are the IR's alone);
``index`` is an input's ONNX position (a skipped optional input has none). The checker runs onnxruntime on a
one-node ONNX model of the same op, attributes and input bytes (a batch-first recurrent node, which
onnxruntime's CPU kernels refuse, as its time-major equivalent) and the probe records both (``OracleRun``);
the spec holds one to the other (DEVICE-KERNEL-ORACLE). The program draws reductions of float32 and int32
(one into the other keepdims' shape, one over an axis past the rank), ConvTransposes (one whose weight does
not fit, one whose output is one longer than its pads give), an LSTM and a GRU, and the steps of
:mod:`zcspec.checks.strategies.kernel_steps`: every other kernel onnxruntime can run, with the edge attributes
its unit tests draw, and some nodes it refuses. An input may give its ``values``; an ``onnx_only`` one (an
ONNX operand the IR keeps as an attribute) and ``onnx_attrs`` go to onnxruntime alone. Without
onnxruntime, oracle steps are skipped (and DEVICE-KERNEL-ORACLE is not exercised). Last of the oracle steps
come :mod:`zcspec.checks.strategies.kernel_steps_refused`'s: one malformed node per argument check of the
kernels that onnxruntime refuses too (Pad's pads of the wrong length, a Transpose perm that is not a
permutation, an axis out of range, a Resize roi of the wrong length, an unknown recurrent direction, ...),
each output slot of the shape the kernel would compute without its check; the device must refuse them all.
They are drawn from their own generator, seeded by the program so far (its JSON text), so every other draw
of a seed stays as it was.

Before the allocator steps come three ``allocator_threads`` steps (checks/allocator_threads.py): 2 to 4
host threads taking round-robin turns calling one of runtime v1's session allocators (``v1_active``, ``v1_fixed_base``) or runtime
v2's caching allocator (``v2_caching``, each call behind the caller's lock) at once, every allocator's
memory given back by the end (V1-ALLOCATOR-ACCOUNTING, V2-ALLOCATOR-ONE-THREAD). They are drawn from their
own generator, seeded by the program's length before the refused oracle steps, so the draws of the steps
around them stay as they were.

After them the allocator steps: the probe's device has ``PROBE_CAPACITY`` (4 MiB) of memory, and the
program fills it with two mallocs of every power of two from 2 MiB down to 512 bytes (some a few bytes
short, so the next block starts past an alignment gap; the second 2 MiB one never fits), frees three
blocks of 4 to 64 KiB (one with its neighbour, the merged hole then asked for), asks for each freed
size plus one byte or one alignment unit and for the freed size itself, frees a freed block again, an
address inside a live block and an offset, frees the 2 MiB block twice (the second a double free) and
last asks for one alignment unit more than it and for its size. Which mallocs had room is the spec's to derive,
from the trace's allocations, the capacity and the SoC's alignment (DEVICE-ALLOC-FIT).

Then come the copy steps: four to seven ``"via": "copy"`` accesses aimed as the first accesses
(in bounds, past the end, before the start, into freed memory, outside device memory, at zero bytes),
a write into a read-only allocation whenever the program has a live one (the device must refuse it) and
a read and a write it must run, at the handles of the program's first part, none longer than the longest
earlier access (the scratch allocation's size stays as it was). Drawn after every other step, they leave
the earlier draws of a seed as they were. Last of all, four mallocs whose arguments the device must refuse:
a size of 0, a negative size, and alignments that are not powers of two, below and above the SoC's own
(DEVICE-MALLOC-ARGS); a step's optional ``"align"`` is the alignment it asks for.

``programs()`` draws programs for Hypothesis and the random campaign (without kernel_steps' steps);
``fixed_programs(count, seed)`` is the seeded set ``zcspec verify`` runs; :mod:`zcspec.checks.device_probe_run` runs them.
"""
from __future__ import annotations

import json
import random

import numpy as np

from hypothesis import strategies as st

from zcspec.checks.allocator_threads import ALLOCATORS
from zcspec.checks.device_probe_run import COLLECTIVES, PROBE_CAPACITY
from zcspec.checks.strategies.kernel_steps import DRAWN_ELSEWHERE, kernel_steps
from zcspec.checks.strategies.kernel_steps_refused import refused_steps
from zcspec.impl.compiler.ir import Graph

PROBE_GRAPH = Graph("device_probe", [], [], [])   # a device scenario's graph: a probe compiles nothing
_UNMAPPED = (0, 16, 0x1000, 1 << 40)              # offsets, not device addresses
_TARGETS = ("inside", "inside", "past_end", "past_end", "before_start", "freed", "unmapped", "zero")
_KERNELS = ("Add", "Sub", "Mul")
_DTYPES = ("float32", "float16", "int32")
_COMPUTES = ("runs", "no_broadcast", "wrong_out")   # every program has one of each, then 0 to 2 more
_REDUCTIONS = ("sum", "prod", "max", "min")


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


def _operand(rng: random.Random, shape: list[int]) -> list[int]:
    """A shape that broadcasts to ``shape``: some leading axes dropped, some others 1."""
    kept = shape[rng.randint(0, len(shape)):] if rng.random() < 0.4 else list(shape)
    return [1 if rng.random() < 0.3 else d for d in kept]


def _wrong(rng: random.Random, shape: tuple[int, ...]) -> list[int]:
    """A shape other than ``shape``: one more leading axis, one axis longer, or the first axis dropped."""
    how = rng.choice(["extra", "longer", "dropped"] if shape else ["extra", "longer"])
    if how == "extra":
        return [rng.randint(1, 3), *shape]
    if how == "dropped":
        return list(shape[1:])
    if not shape:
        return [2]
    i = rng.randrange(len(shape))
    return [d + 1 if j == i else d for j, d in enumerate(shape)]


def _compute(rng: random.Random, case: str) -> dict:
    """A compute step whose shapes are legal (``runs``) or not (``no_broadcast``, ``wrong_out``)."""
    shape = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
    if case == "no_broadcast":   # one axis of two different lengths, neither 1
        a, b = list(shape), [1 if rng.random() < 0.3 else d for d in shape]
        i = rng.randrange(len(shape))
        a[i], b[i] = rng.sample([2, 3, 4], 2)
        out = a
    else:
        a, b = _operand(rng, shape), _operand(rng, shape)
        out = list(np.broadcast_shapes(tuple(a), tuple(b)))
        if case == "wrong_out":
            out = _wrong(rng, tuple(out))
    return {"op": "compute", "kernel": rng.choice(_KERNELS), "a": a, "b": b, "out": out,
            "dtype": rng.choice(_DTYPES)}


def program(rng: random.Random, steps: int, kernels: bool = True) -> tuple[dict, ...]:
    """A probe program of about ``steps`` steps drawn with ``rng`` (see the module doc); ``kernels``: with
    kernel_steps' oracle steps and kernel_steps_refused's (about 75 and 50, a tenth of a second to run)."""
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
    cases = list(_COMPUTES) + [rng.choice(_COMPUTES) for _ in range(rng.randint(0, 2))]
    rng.shuffle(cases)
    out.extend(_compute(rng, case) for case in cases)
    out.extend(_collective(rng) for _ in range(rng.randint(1, 2)))
    out.extend(_expand(rng, legal) for legal in rng.sample([True, False], 2))
    out.extend(_oracle_steps(rng, kernels))
    threads = _allocator_threads(random.Random(len(out)))   # its own generator: the later draws stay
    if kernels:   # the last oracle steps, from a generator of their own: every other draw stays as it was
        out.extend(refused_steps(random.Random(json.dumps(out, sort_keys=True))))
    out.extend(threads)
    out.extend(_allocator(rng, len(sizes)))
    out.extend(_copies(rng, sizes, live, freed, out))   # every earlier draw stays as it was
    out.extend(_bad_mallocs(rng))   # last of all, likewise
    return tuple(out)


def _bad_mallocs(rng: random.Random) -> list[dict]:
    """Malloc steps whose arguments the device must refuse (DEVICE-MALLOC-ARGS): a size of 0, a negative size,
    and a positive size at an alignment that is not a power of two (below and above every SoC's own), in
    random order. Refused, each takes a handle no later step aims at."""
    out = [{"op": "malloc", "size": 0}, {"op": "malloc", "size": -rng.choice([1, 512])},
           {"op": "malloc", "size": rng.choice([64, 512]), "align": rng.choice([3, 24, 96])},
           {"op": "malloc", "size": rng.choice([64, 512]), "align": rng.choice([3, 5, 6]) << 12}]
    rng.shuffle(out)
    return out


def _copies(rng: random.Random, sizes: list[int], live: list[int], freed: list[int], steps: list[dict]) -> list[dict]:
    """Copy accesses (``"via": "copy"``, synchronous D2D) at the handles of the program's first part (see the
    module doc): each at most as long as the longest earlier access, so the probe's scratch is as it was."""
    largest = max(s["nbytes"] for s in steps if "nbytes" in s)
    read_only = [s["read_only"] for s in steps if s["op"] == "malloc"][:len(sizes)]
    out = []
    for _ in range(rng.randint(4, 7)):
        a = _access(rng, sizes, live, freed)
        if a["nbytes"] > largest:   # the same end, a later start: still past the end it aimed past
            a["offset"] += a["nbytes"] - largest
            a["nbytes"] = largest
        out.append({**a, "via": "copy"})
    ro = [h for h in live if read_only[h]]
    if ro:   # a write the device must refuse: a D2D copy into read-only memory, in bounds
        h = rng.choice(ro)
        offset = rng.randrange(sizes[h])
        out.append({"op": "write", "via": "copy", "handle": h, "offset": offset,
                    "nbytes": min(largest, rng.randint(1, sizes[h] - offset))})
    rw = [h for h in live if not read_only[h]]
    for op in ("read", "write"):   # and a read and a write it must run
        h = rng.choice(rw or live)
        if op == "write" and read_only[h]:
            break
        out.append({"op": op, "via": "copy", "handle": h, "offset": 0, "nbytes": min(largest, sizes[h])})
    rng.shuffle(out)
    return out


def _allocator_threads(rng: random.Random) -> list[dict]:
    """One ``allocator_threads`` step per runtime allocator (checks/allocator_threads.py), 2 to 4 threads."""
    kib = lambda *ns: [n << 10 for n in ns]  # noqa: E731
    sizes = {"v1_active": kib(rng.randint(1, 64), rng.randint(1, 256), 4),
             "v1_fixed_base": kib(rng.choice([512, 2048]), rng.randint(1, 1024)),
             "v2_caching": kib(rng.randint(1, 64), rng.randint(1, 512))}
    return [{"op": "allocator_threads", "allocator": kind, "threads": rng.randint(2, 4), "rounds": rng.randint(1, 3),
             "sizes": sizes[kind]} for kind in ALLOCATORS]


def _io(shape, dtype: str = "float32", index: int | None = None) -> dict:
    return {"shape": list(shape), "dtype": dtype, **({} if index is None else {"index": index})}


def _reduce(rng: random.Random, dtype: str, case: str = "runs") -> dict:
    """A reduction over a random nonempty set of axes; ``wrong_out``: the output shape of the other keepdims;
    ``bad_axis``: an axis one past the rank."""
    shape = [rng.randint(1, 4) for _ in range(rng.randint(2, 3))]
    axes = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
    keep = rng.randint(0, 1)
    ops = ("ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL2") if dtype == "float32" else (
        "ReduceMax", "ReduceMin", "ReduceMean")
    out = [1 if a in axes else d for a, d in enumerate(shape)] if (keep == 1) != (case == "wrong_out") else [
        d for a, d in enumerate(shape) if a not in axes]
    if case == "bad_axis":
        axes = [len(shape)]
    signed = [a - len(shape) if rng.random() < 0.3 else a for a in axes]
    return {"op": "oracle", "kernel": rng.choice(ops), "inputs": [_io(shape, dtype)], "outs": [_io(out, dtype)],
            "attrs": {"axes": signed, "keepdims": keep}}


def _conv_transpose(rng: random.Random, case: str = "runs") -> dict:
    """A 2-D ConvTranspose; ``bad_weight``: a weight of one channel too many; ``wrong_out``: an output one
    longer than its pads give."""
    group = rng.choice([1, 2])
    c, m = 2 * rng.randint(1, 2), group * rng.randint(1, 2)
    x = [1, c, rng.randint(2, 3), rng.randint(2, 3)]
    kern, strides = [rng.randint(1, 3), rng.randint(1, 2)], [rng.randint(1, 2), rng.randint(1, 2)]
    pads = [rng.randint(0, k - 1) for k in kern] * 2
    w = [c + (1 if case == "bad_weight" else 0), m // group, *kern]
    full = [st_ * (n - 1) + k for st_, n, k in zip(strides, x[2:], kern)]
    out = [1, m, *(f - pads[j] - pads[j + 2] for j, f in enumerate(full))]
    if case == "wrong_out":
        out[2] += 1
    inputs = [_io(x), _io(w)] + ([_io([m])] if rng.random() < 0.5 else [])
    return {"op": "oracle", "kernel": "ConvTranspose", "inputs": inputs, "outs": [_io(out)],
            "attrs": {"group": group, "strides": strides, "pads": pads, "kernel_shape": kern}}


def _recurrent(rng: random.Random, op: str) -> dict:
    """An LSTM or GRU over a short sequence: forward, reverse or bidirectional, either layout, with or without
    a bias and an initial state (skipped optional inputs named by position, as the front end records them)."""
    gates = 4 if op == "LSTM" else 3
    direction = rng.choice(["forward", "reverse", "bidirectional"])
    dirs = 2 if direction == "bidirectional" else 1
    seq, batch, size, hidden = rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3)
    layout = rng.randint(0, 1)
    inputs = [_io([batch, seq, size] if layout else [seq, batch, size], index=0),
              _io([dirs, gates * hidden, size], index=1), _io([dirs, gates * hidden, hidden], index=2)]
    if rng.random() < 0.6:
        inputs.append(_io([dirs, 2 * gates * hidden], index=3))
    if rng.random() < 0.6:
        inputs.append(_io([batch, dirs, hidden] if layout else [dirs, batch, hidden], index=5))
    state = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
    outs = [_io([batch, seq, dirs, hidden] if layout else [seq, dirs, batch, hidden]), _io(state)]
    if op == "LSTM":
        outs.append(_io(state))
    attrs_ = {"hidden_size": hidden, "direction": direction, "layout": layout,
              "_present_inputs": [x["index"] for x in inputs]}
    if op == "GRU":
        attrs_["linear_before_reset"] = rng.randint(0, 1)
    return {"op": "oracle", "kernel": op, "inputs": inputs, "outs": outs, "attrs": attrs_, "opset": 14}


def _oracle_steps(rng: random.Random, kernels: bool = True) -> list[dict]:
    """Oracle steps (judged against onnxruntime, DEVICE-KERNEL-ORACLE): reductions of float32 and int32 (one
    whose output has the other keepdims' shape, one over an axis past the rank), ConvTransposes (one whose
    weight does not fit, one whose output is one longer than its pads give), an LSTM and a GRU, and
    kernel_steps' steps for every other kernel onnxruntime runs (some it refuses)."""
    steps = [_reduce(rng, "float32"), _reduce(rng, "int32"), _reduce(rng, rng.choice(["float32", "int32"]),
                                                                    "wrong_out"),
             _reduce(rng, "float32", "bad_axis"), _conv_transpose(rng), _conv_transpose(rng, "bad_weight"),
             _conv_transpose(rng, "wrong_out"), *(_recurrent(rng, op) for op in rng.sample(DRAWN_ELSEWHERE, 2))]
    steps += kernel_steps(rng) if kernels else []
    rng.shuffle(steps)
    return steps


def _allocator(rng: random.Random, first: int) -> list[dict]:
    """Allocator steps that fill the probe's device and fragment it (see the module doc); ``first`` is the
    handle of their first malloc (the program's earlier mallocs come before)."""
    out: list[dict] = []
    sizes: list[int] = []

    def malloc(size: int) -> int:
        out.append({"op": "malloc", "size": size, "read_only": False})
        sizes.append(size)
        return first + len(sizes) - 1

    def free(h: int | None, offset: int = 0) -> None:
        out.append({"op": "free", "handle": h, "offset": offset})

    # Fill: two mallocs of every power of two from half the capacity down to 512 bytes, some a few bytes
    # short of it (an unaligned end, so the next block starts past an alignment gap): the second of half
    # the capacity never fits, and memory ends with only gaps smaller than the last sizes.
    fill = []
    for k in range(PROBE_CAPACITY.bit_length() - 2, 8, -1):
        for _ in range(2):
            fill.append((malloc((1 << k) - (rng.randint(1, 300) if rng.random() < 0.3 else 0)), 1 << k))
    big, mid = fill[0][0], [(h, n) for h, n in fill if 1 << 12 <= n <= 1 << 16]
    # Fragment: free blocks of middle sizes (one of them with its neighbour: the two holes must merge), then
    # ask for a freed size plus one byte (fits only in a merged hole or a gap of a larger size), the freed
    # sizes themselves (an exact fit), and one alignment unit more.
    holes = rng.sample(mid, 3)
    for h, _ in holes:
        free(h)
    j = next(i for i, (h, _) in enumerate(fill) if h == holes[0][0])
    if j + 1 < len(fill) and fill[j + 1] not in holes:
        free(fill[j + 1][0])
        malloc(holes[0][1] + fill[j + 1][1] - rng.choice([0, 512]))
    for _, n in holes[1:]:
        malloc(n + rng.choice([1, 512]))
        malloc(n)
    # Frees: the first hole's handle again (refused unless a malloc since took its address), an address
    # inside a live block and an offset (both refused), the large block twice (the second refused).
    free(holes[0][0])
    free(big, rng.choice([8, 512, 4096]))
    free(None, rng.choice(_UNMAPPED))
    free(big)
    free(big)
    # The large block's bytes are free again: its own size fits, one alignment unit more does not.
    malloc(fill[0][1] + 512)
    malloc(fill[0][1] - rng.choice([0, 1, 511]))
    return out


def _expand(rng: random.Random, legal: bool) -> dict:
    """An Expand step (one input ``a``, no ``b``): ``a`` broadcasts to ``out``, or has one axis longer."""
    shape = [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
    a = _operand(rng, shape) if legal else [d + 1 if j == 0 else d for j, d in enumerate(shape)]
    return {"op": "compute", "kernel": "Expand", "a": a, "out": shape, "dtype": rng.choice(_DTYPES)}


def _collective(rng: random.Random) -> dict:
    ranks = rng.randint(2, 4)
    return {"op": "collective", "kernel": rng.choice(COLLECTIVES), "ranks": ranks,
            "shape": [rng.randint(1, 5) for _ in range(rng.randint(1, 2))], "dtype": "float32",
            "reduction": rng.choice(_REDUCTIONS), "root": rng.randrange(ranks)}


def programs(min_steps: int = 4, max_steps: int = 32) -> st.SearchStrategy[tuple[dict, ...]]:
    """Probe programs of ``min_steps`` to ``max_steps`` drawn steps (plus the two closing accesses, the
    compute steps and the rest the module doc lists, copy steps last), without kernel_steps' oracle steps:
    the random campaign draws many probes, verify's fixed ones have them (tests/device/test_kernel_oracle_steps.py draws kernel steps from random seeds)."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"programs(min_steps={min_steps!r}, max_steps={max_steps!r}): need 1 <= min <= max")
    return st.builds(program, st.randoms(use_true_random=False), st.integers(min_steps, max_steps), st.just(False))


def fixed_programs(count: int = 8, seed: int = 0, steps: int = 32) -> list[tuple[dict, ...]]:
    """``count`` programs drawn from seeds ``seed``, ``seed + 1``, ...: the same set on every run."""
    return [program(random.Random(seed + i), steps) for i in range(count)]
