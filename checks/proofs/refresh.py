"""Proving runtime v1's argument refresh right for every legal placement of the user's buffers.

The claim (docs/proofs.md "The refresh proof"): after ``calls`` execute calls, each binding
every model input and output to a fresh device buffer, for **every** placement of those
buffers that the API allows, every argument slot of every task holds:

- ``at_offset``: for a slot the model file's zero-copy table lists as I/O ``io`` plus ``rel``,
  with ``io`` bound to the user's buffer at ``B``: exactly ``B + rel`` (GE
  ``ArgsIoAddrsUpdater::SetArgIoAddrs``: ``active_base[id] + offset``);
- ``outside_buffer``: the ``nbytes`` the task accesses through it lie inside that buffer,
  however small a buffer the size check accepts;
- ``misaligned``: its address is a multiple of its element size (the device's kernels need it);
- ``moved``: any other slot (weights, the feature map, copy-only I/O) still holds the address it
  was given at load: the refresh rewrites only slots bound to a moved buffer.

Where the facts come from. The expectation is the **model file's**: its argument tables
(each slot's dtype and bytes) and zero-copy table (task, slot, I/O, relative offset), read
back from the encoded bytes; the load-time values are read from the device's argument tables.
What is proved is the **runtime's**: v1 is loaded, binds concrete buffers (its checks and its
copy-or-refresh choice run as they are), and its refresh (``impl.runtime.v1.refresh.refresh``,
looked up at call time, so a fault variant installed on it is what runs) is then run with
:class:`~zcspec.checks.proofs.symbolic.SymAddr` bases in place of the buffer addresses: the slot
values come back as formulas of the bases, and Z3 searches for a placement that breaks a claim.

Legal placements, the assumptions, are :mod:`zcspec.checks.proofs.refresh_facts`'s (each
with its GE source: non-null, element-aligned and nothing more, as small as
``DavinciModel::CheckUserAndModelSize`` accepts, outputs not overlapping other I/O), plus
the path conditions the refresh's own ``==``/``!=`` tests recorded: each call's buffers differ
from the bases the slots held (a re-bind to the very same buffers rewrites nothing and is
what the fixed execution checks run).

Outcomes: ``proved`` (unsat); ``refuted`` with the counterexample placement, re-run through
the real refresh with concrete addresses to confirm it and name the broken slots; ``unknown``
(Z3 gave up, or the refresh branched on an address in a way symbolic execution cannot follow),
never a pass.
"""
from __future__ import annotations

import importlib
import time

import attrs
import z3

from zcspec.checks.proofs.refresh_facts import SlotFact, call_assumptions, item_size, model_facts, multiple
from zcspec.checks.proofs.symbolic import WIDTH, PathLog, SymAddr, SymbolicBranch, as_bv
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.bind import bind
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.load import load

# The module, not the function: its ``refresh`` is looked up at each call, so a fault variant
# swapped in (checks/faults) is the one that runs.
_REFRESH = importlib.import_module("zcspec.impl.runtime.v1.refresh")

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
_TOP = 1 << WIDTH


@attrs.frozen
class RefreshProof:
    """What Z3 said about the refresh of one model, and what it cost."""

    status: str                                   # proved | refuted | unknown
    kind: str | None = None                       # the first broken claim, when refuted
    pair: tuple[str, ...] | None = None           # (slot label, I/O name or "") of that claim
    reason: str = ""                              # Z3's reason (unknown); the counterexample (refuted)
    counterexample: tuple[tuple[str, int], ...] = ()
    violations: tuple[str, ...] = ()              # every claim broken under the counterexample
    claims_encoded: int = 0
    calls: int = 0
    build_s: float = 0.0
    solve_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PROVED


@attrs.define
class _Run:
    """One symbolic (or concrete) run of the refresh sequence."""

    state: dict                   # (task, slot) -> value now (int or SymAddr)
    bases: dict                   # io key -> base of the last call (refresh-bound I/O only)
    sizes: dict                   # io key -> declared size of the last call
    assumptions: list = attrs.Factory(list)
    names: list = attrs.Factory(list)     # (name, z3 constant) of every free variable
    witness: dict = attrs.Factory(dict)   # name -> a legal value (real buffers of the proof's device)


def _argument_tables(lm) -> dict:
    """(task, slot) -> the value the device holds now (an uncounted peek of each argument table)."""
    out = {}
    for t, task in enumerate(lm.tasks):
        if task.slots:
            values = lm.device.peek(task.args, (len(task.slots),), "<u8").tolist()
            out.update(((t, s), int(v)) for s, v in enumerate(values))
    return out


def _concrete_bindings(lm) -> list:
    """v1's own bindings of fresh device buffers, one per I/O of its planned size (mode decided by v1)."""
    n = lm.n_inputs
    bufs = [_buffer(lm, z) for z in lm.io]
    return bind(lm, bufs[:n], bufs[n:])


def _buffer(lm, z) -> UserBuffer:
    size = max(z.desc.size, 1)
    return UserBuffer(z.name, lm.device.malloc(size, tag=f"proof buffer {z.name}"), size)


def _symbolic_run(lm, ios, bindings, calls: int) -> _Run:
    log = PathLog()
    run = _Run(_argument_tables(lm), {}, {})
    active = dict(lm.state.active)
    for c in range(calls):
        bases, sizes, call = {}, {}, []
        for b in bindings:
            if b.mode == "refresh":
                name = f"call{c}:{b.io.name}"
                sym = SymAddr.variable(name, log)
                bases[b.io.key], sizes[b.io.key] = sym.expr, z3.BitVec(f"{name}:size", WIDTH)
                run.names += [(name, sym.expr), (f"{name}:size", sizes[b.io.key])]
                witness = b.buffer if c == 0 else _buffer(lm, b.io)   # fresh buffers each call
                run.witness.update({name: witness.addr, f"{name}:size": witness.size})
                b = attrs.evolve(b, address=sym)
            call.append(b)
        active = _apply(run.state, _REFRESH.refresh(lm.refresh_table, active, call, lm.state.feature_map))
        run.assumptions += call_assumptions(ios, bases, sizes, call)
        run.bases, run.sizes = bases, sizes
    run.assumptions += log.conditions
    return run


# Z3's deterministic resource limit per check: the bound that decides a proof (about 1.5x what the planted
# refresh faults of tests/checks/test_z3_refresh.py need to be refuted, some 10 s on an idle core). The wall
# timeout is only a safety net: with a timeout alone, the same proof was refuted on an idle machine and
# "unknown" on a loaded one.
RLIMIT = 150_000_000


def _limited(timeout_ms: int) -> z3.Solver:
    solver = z3.Solver()
    solver.set("timeout", int(timeout_ms))
    solver.set("rlimit", RLIMIT)
    return solver


def _satisfiable(run: _Run, timeout_ms: int) -> bool:
    """Whether some placement meets the assumptions: the real buffers the proof allocated usually
    do (checked by substitution, cheap); else Z3 is asked."""
    pairs = [(c, z3.BitVecVal(run.witness[name], WIDTH)) for name, c in run.names]
    if z3.is_true(z3.simplify(z3.substitute(z3.And(run.assumptions), *pairs))):
        return True
    solver = _limited(timeout_ms)
    solver.add(*run.assumptions)
    return solver.check() == z3.sat


def _concrete_run(lm, bindings, values: dict, calls: int) -> tuple[dict, dict, dict]:
    """The refresh sequence again, with the counterexample's addresses as plain ints."""
    state, active = _argument_tables(lm), dict(lm.state.active)
    bases, sizes = {}, {}
    for c in range(calls):
        call = []
        for b in bindings:
            if b.mode == "refresh":
                name = f"call{c}:{b.io.name}"
                bases[b.io.key], sizes[b.io.key] = values[name], values[f"{name}:size"]
                b = attrs.evolve(b, address=values[name])
            call.append(b)
        active = _apply(state, _REFRESH.refresh(lm.refresh_table, active, call, lm.state.feature_map))
    return state, bases, sizes


def _apply(state: dict, plan) -> dict:
    for task, slots in plan.per_task:
        for slot, address in slots.items():
            state[(task, slot)] = address
    return dict(plan.active)


def _claims(slots, ios, run: _Run, loaded: dict) -> list[tuple[str, SlotFact, object]]:
    """(kind, slot, Z3 condition "this claim is broken") for every slot."""
    out = []
    for f in slots:
        v = as_bv(run.state[(f.task, f.slot)])
        if f.io is not None and f.io in run.bases:
            b, n = run.bases[f.io], run.sizes[f.io]
            out.append(("at_offset", f, v != b + f.rel))
            # v - b is exact once v >= b; one more bit keeps "+ nbytes" from wrapping.
            out.append(("outside_buffer", f, z3.Or(z3.ULT(v, b), z3.UGT(z3.ZeroExt(1, v - b) + f.nbytes,
                                                                        z3.ZeroExt(1, n)))))
            if item_size(f.dtype) > 1:
                out.append(("misaligned", f, z3.Not(multiple(v, item_size(f.dtype)))))
        else:
            out.append(("moved", f, v != loaded[(f.task, f.slot)]))
    return [(k, f, c) for k, f, c in out if not z3.is_false(z3.simplify(c))]


def _broken(slots, ios, state, bases, sizes, loaded) -> list[tuple[str, SlotFact, str]]:
    """The claims broken in a concrete state (plain integer checks, independent of the formula)."""
    out = []
    for f in slots:
        v = state[(f.task, f.slot)] % _TOP
        if f.io is not None and f.io in bases:
            b, n, name = bases[f.io], sizes[f.io], ios[f.io].name
            if v != (b + f.rel) % _TOP:
                out.append(("at_offset", f, f"{f.label} holds {v:#x}, the zero-copy table says {name!r} at "
                                            f"{b:#x} + {f.rel}"))
            if v < b or v + f.nbytes > b + n:
                out.append(("outside_buffer", f, f"{f.label} accesses [{v:#x}, +{f.nbytes}) outside {name!r}'s "
                                                 f"buffer [{b:#x}, +{n})"))
            if v % item_size(f.dtype):
                out.append(("misaligned", f, f"{f.label} at {v:#x} is not {item_size(f.dtype)}-byte aligned ({f.dtype})"))
        elif v != loaded[(f.task, f.slot)]:
            out.append(("moved", f, f"{f.label} holds {v:#x}, its load-time address was "
                                    f"{loaded[(f.task, f.slot)]:#x}"))
    return out


def _solve(run: _Run, claims, timeout_ms: int):
    if not _satisfiable(run, timeout_ms):   # no vacuous proof
        return z3.unknown, None, "no placement satisfies the assumptions and path conditions (a vacuous proof)"
    solver = _limited(timeout_ms)
    solver.add(*run.assumptions)
    broken = z3.Or([c for _, _, c in claims]) if claims else z3.BoolVal(False)
    answer = solver.check(broken)
    if answer == z3.sat:
        return answer, _readable(solver, run, broken), ""
    return answer, None, solver.reason_unknown() if answer == z3.unknown else ""


def _readable(solver, run: _Run, broken):
    """A counterexample that differs from the real buffers the proof allocated in as few values as
    possible (greedily: each variable pinned to its real value, or near it, if the claim still breaks)."""
    pinned = []
    for name, c in run.names:
        w = run.witness[name]
        # Exactly the real value, else a view at most 64 bytes into the real buffer.
        for pin in (c == w, z3.And(z3.UGE(c, w), z3.ULE(c - w, 64))):
            if solver.check(broken, *pinned, pin) == z3.sat:
                pinned.append(pin)
                break
    solver.check(broken, *pinned)
    return solver.model()


def prove_refresh(model, *, load_options: LoadOptions = LoadOptions(), calls: int = 2,
                  timeout_ms: int = 120_000) -> RefreshProof:
    """Prove the claims of the module docstring for CompiledModel ``model`` under v1 ``load_options``,
    over ``calls`` consecutive execute calls with fresh buffers each. Each Z3 check is bounded by
    ``RLIMIT`` (deterministic) and, as a safety net, ``timeout_ms`` of wall time."""
    if calls < 1:
        raise ValueError(f"calls={calls} must be >= 1")
    start = time.perf_counter()
    # Weights decide no address: left out, so loading a large model stays cheap.
    model = attrs.evolve(model, weights=())
    slots, ios = model_facts(model)
    device = Device(model.soc, poison=False)   # no poison fill: the proof reads no data
    lm = None
    try:
        lm = load(device, model, load_options)
        return _prove_loaded(lm, slots, ios, calls, timeout_ms, start)
    finally:
        if lm is not None:
            lm.unload()
        device.close()


def _prove_loaded(lm, slots, ios, calls: int, timeout_ms: int, start: float) -> RefreshProof:
    loaded = _argument_tables(lm)
    bindings = _concrete_bindings(lm)
    try:
        run = _symbolic_run(lm, ios, bindings, calls)
    except SymbolicBranch as e:
        return RefreshProof(UNKNOWN, reason=str(e), calls=calls, build_s=time.perf_counter() - start)
    claims = _claims(slots, ios, run, loaded)
    built = time.perf_counter()
    answer, model_, why = _solve(run, claims, timeout_ms)
    common = dict(claims_encoded=len(claims), calls=calls, build_s=built - start, solve_s=time.perf_counter() - built)
    if answer == z3.unsat:
        return RefreshProof(PROVED, **common)
    if model_ is None:
        return RefreshProof(UNKNOWN, reason=why or "unknown", **common)
    return _refuted(lm, slots, ios, bindings, loaded, run, model_, calls, common)


def _refuted(lm, slots, ios, bindings, loaded, run, model_, calls, common) -> RefreshProof:
    values = {name: model_.eval(c, model_completion=True).as_long() for name, c in run.names}
    state, bases, sizes = _concrete_run(lm, bindings, values, calls)
    found = _broken(slots, ios, state, bases, sizes, loaded)
    if not found:
        raise RuntimeError("Z3 found a placement under which the concrete refresh breaks no claim: the "
                           "symbolic run and the concrete one disagree (a bug in checks.proofs.refresh)")
    kind, f, _ = found[0]
    cx = tuple(sorted(values.items()))
    moved = [f"{k}={v:#x} (a real buffer: {run.witness[k]:#x})" for k, v in cx if v != run.witness[k]]
    text = ", ".join(moved) + "; every other buffer as allocated" if moved else "the buffers as allocated"
    return RefreshProof(REFUTED, kind, (f.label, ios[f.io].name if f.io else ""),
                        f"counterexample: {text}; {found[0][2]}", cx, tuple(m for _, _, m in found), **common)
