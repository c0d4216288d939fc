"""The bugs nobody seeded: small, plausible mistakes in impl/ that are not in the fault catalogue.

Issue 13 measured that the unit tests caught ten such bugs and ``zcspec verify`` only five. Each
entry here reintroduces one of them (for the duration of a ``with`` block, impl/ untouched), so
``tests/checks/test_verify_catches.py`` can demand that plain ``zcspec verify`` reports it. The catalogue's
variants (checks/faults) are hunted by the random campaign; these are judged by the default
verify run, the command users run.

``BUGS`` maps a name to ``(description, patch)``; ``patch()`` returns a context manager.
"""
from __future__ import annotations

import contextlib

import attrs

from zcspec.checks.faults.variant import preload, swap
from zcspec.impl.runtime.user_buffers import UserBuffer


@contextlib.contextmanager
def attribute(owner, name: str, make_new):
    """``owner.name`` replaced by ``make_new(original)`` (a class attribute: methods), restored on exit."""
    original = getattr(owner, name)
    setattr(owner, name, make_new(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def _lifetime_one_step_early():
    """Every tensor read after the step it is produced in dies one step before its last reader."""
    def make(own_lifetimes):
        def wrong(graph, step):
            return {t: (f, l - 1 if l > f else l) for t, (f, l) in own_lifetimes(graph, step).items()}
        return wrong
    return swap("zcspec.impl.compiler.aliases", "own_lifetimes", make)


def _zero_copy_takes_freed_blocks():
    """First-stage reuse forgets that zero-copy units never take a freed block (GE's AddZeroCopyLifeReuseBlock)."""
    def make(may_reuse):
        # the zero-copy exclusion lost: an I/O unit may reuse like any reusable unit
        return lambda unit, options: (options.reuse and (unit.reusable or unit.zero_copy is not None)
                                      and not unit.continuous and not unit.atomic)
    return swap("zcspec.impl.compiler.memory.ge_blocks", "_may_reuse", make)


def _align_one_unit_up():
    """Alignment rounds an exact multiple up by one more unit (``x // to + 1`` for ``ceil``)."""
    return swap("zcspec.impl.compiler.memory.sizes", "align",
                lambda align: (lambda x, to: (x // to + 1) * to if x > 0 else 0))


def _refresh_skips_last_slot_of_each_task():
    """The v1 refresh loop stops one slot short in every task (``range(n - 1)``)."""
    from zcspec.impl.runtime.v1.refresh import RefreshTable

    def make(refresh):
        def wrong(table, active, bindings, feature_map):
            last = {}
            for r in table.registrations:
                last[r.task] = max(last.get(r.task, -1), r.slot)
            kept = tuple(r for r in table.registrations if r.slot != last[r.task])
            return refresh(RefreshTable(kept), active, bindings, feature_map)
        return wrong
    return swap("zcspec.impl.runtime.v1.refresh", "refresh", make)


@contextlib.contextmanager
def _disable_zero_copy_ignored():
    """I/O sharing an address (an input that is also an output) is not seen as sharing: neither GE's
    copy from the earlier I/O's allocation (GenOutputMemAllocations) nor, on the legacy path,
    DisableZeroCopy applies."""
    with swap("zcspec.impl.runtime.v1.zero_copy", "allocation_sources", lambda f: (lambda model, soc, options: {})), \
            swap("zcspec.impl.runtime.v1.zero_copy", "copy_sources", lambda f: (lambda model: {})), \
            swap("zcspec.impl.runtime.v1.zero_copy", "_overlaps", lambda f: (lambda model, sources: {})):
        yield


def _fallback_under_always_zero_copy():
    """The lowering ignores always_zero_copy: outputs fall back to runtime memory and copies."""
    from zcspec.impl.runtime.v2 import passes

    def make(pipeline):
        def lenient(fn):
            return lambda graph, options: fn(graph, attrs.evolve(options, always_zero_copy=False))
        return tuple((name, lenient(fn) if name == "ModelOutTensorZeroCopy" else fn, on) for name, fn, on in pipeline)
    return swap(passes.__name__, "PIPELINE", make)


def _device_bounds_loosened():
    """The device accepts accesses that run up to 64 bytes past the end of an allocation."""
    from zcspec.impl.device.memory import AddressSpace as Memory
    return _loosen(Memory)


@contextlib.contextmanager
def _loosen(memory_cls, slack: int = 64):
    def fast(original):
        def wrong(self, addr, nbytes, write):
            return original(self, addr, max(1, nbytes - slack) if nbytes > 0 else nbytes, write)
        return wrong

    def check(original):
        def wrong(self, addr, nbytes, **kw):
            return original(self, addr, max(1, nbytes - slack) if nbytes > 0 else nbytes, **kw)
        return wrong
    with attribute(memory_cls, "fast_offset", fast), attribute(memory_cls, "check", check):
        yield


def _refreshable_any_for_all():
    """The conflict optimizer's refresh test asks whether *any* task kind of a node can be refreshed."""
    def make(refreshable):
        def wrong(node, soc, *, side="output"):
            from zcspec.impl.compiler import ops
            kinds = [k for k in ops.task_kinds(node) if side == "output" or k != "memset"]
            in_loop = bool(node.attr("_in_loop", False))
            return any(soc.can_refresh(k, in_loop=in_loop) for k in kinds) if kinds else True
        return wrong
    return swap("zcspec.impl.compiler.anchor_types", "refreshable", make)


def _every_output_copy_only():
    """Runtime v1 decides every model output is copy-only (an inverted test in the classifier)."""
    def make(reasons):
        def wrong(model, soc, options, d, users, overlaps, sources):
            why, hccl = reasons(model, soc, options, d, users, overlaps, sources)
            return (why or ["(bug) outputs are always copied"]) if d.role == "output" else why, hccl
        return wrong
    return swap("zcspec.impl.runtime.v1.zero_copy", "_reasons", make)


def _v2_pool_kept_at_unload():
    """Runtime v2's caching allocator keeps its cached spans when the model is unloaded."""
    from zcspec.impl.runtime.v2.allocators import CachingAllocator

    def make(close):
        def wrong(self):
            self._closed = True   # closed, but the cached spans are never given back
        return wrong
    return attribute(CachingAllocator, "close", make)


@contextlib.contextmanager
def _bounds_loosened_and_size_check_off():
    """Loosened bounds checks in both places that could stop an overrun: v1 judges a user buffer by
    the tensor's size instead of its own (size and live-range checks pass for an undersized buffer),
    and the device lets accesses run past an allocation's end. Kernels write past the user's buffer
    and nothing faults."""
    from zcspec.impl.device.memory import AddressSpace as Memory

    def make(bind_one):
        def wrong(lm, z, b):
            if not (isinstance(b, UserBuffer) and b.addr):
                return bind_one(lm, z, b)
            judged = attrs.evolve(b, size=max(b.size, z.desc.size, z.desc.nbytes))
            return attrs.evolve(bind_one(lm, z, judged), buffer=b)
        return wrong
    with _loosen(Memory, slack=1 << 20), swap("zcspec.impl.runtime.v1.bind", "_bind_one", make), \
            swap("zcspec.impl.runtime.v1.bind", "_check_live", lambda f: (lambda lm, z, b: None)):
        yield


def _group_begins_at_first_step():
    """The cross-stream bug an independent suite found: a continuous group whose piece is written on
    another stream begins at its first step, so that piece may overwrite a tensor still alive on
    the group's stream (GE lowers the start by GetDiffStreamMinLifeTime)."""
    from zcspec.impl.compiler.memory.unit_facts import Facts as _Facts
    return attribute(_Facts, "first_write", lambda original: (lambda self, roots, stream, first: first))


def _alias_reserves_past_root():
    """An alias's aligned size rounded up on its own instead of cut at its root's reserved end (``max`` for
    ``min`` in sizes.alias_sizes): a piece near the end of its root then reports reserving bytes past it,
    which the model-file loader refuses on GE's plans and no layout claim read (a mutant verify missed)."""
    def make(alias_sizes):
        def wrong(size, offset, root_offset, root_size, root_aligned, options):
            size, _ = alias_sizes(size, offset, root_offset, root_size, root_aligned, options)
            return size, max(size, block_size(size, options), root_offset + root_aligned - offset)
        return wrong
    from zcspec.impl.compiler.memory.sizes import block_size
    return swap("zcspec.impl.compiler.memory.sizes", "alias_sizes", make)


def _inner_axis_cut_as_view():
    """The outer axis taken as the first axis whose size is not 2 (``!= 2`` for ``!= 1``): a Split along
    axis 1 of a (2, 4, 8) tensor becomes a view whose pieces are not contiguous (a mutant verify missed;
    PASS-VIEW-CONTIGUOUS now judges the cut, EXEC-ORACLE the numbers)."""
    return swap("zcspec.impl.compiler.passes.outer_axis_views", "_outer_axis",
                lambda f: (lambda shape: next((i for i, d in enumerate(shape) if d != 2), 0)))


def _conflict_never_spared():
    """GE's IsSameOrPartialSame always false: the conflict optimizer copies a continuous input whose sources are a
    fused collective's outputs in order (builtin:continuous_out_in's ar2), a copy GE would not make; every
    layout stays valid, only the two-sided PASS-LAYOUT-CONFLICT sees it."""
    return swap("zcspec.impl.compiler.anchor_types", "same_or_partial_same", lambda f: (lambda outs, peers: False))


BUGS = {
    "lifetime-one-step-early": ("a lifetime ending a step early", _lifetime_one_step_early),
    "zero-copy-takes-freed-blocks": ("zero-copy units allowed to take freed blocks", _zero_copy_takes_freed_blocks),
    "align-one-unit-up": ("alignment rounding one unit up", _align_one_unit_up),
    "refresh-skips-last-slot": ("the refresh skipping each task's last slot", _refresh_skips_last_slot_of_each_task),
    "disable-zero-copy-ignored": ("an ignored DisableZeroCopy for I/O sharing an address", _disable_zero_copy_ignored),
    "azc-fallback": ("a fallback under always_zero_copy", _fallback_under_always_zero_copy),
    "device-bounds-loosened": ("a loosened device bounds check", _device_bounds_loosened),
    "refreshable-any-for-all": ("`any` for `all` in the conflict optimizer's refresh test", _refreshable_any_for_all),
    "every-output-copy-only": ("every output made copy-only", _every_output_copy_only),
    "v2-pool-kept-at-unload": ("the v2 pool never freed at unload", _v2_pool_kept_at_unload),
    "cross-stream-group-start": ("a continuous group with a piece from another stream begun at its first step",
                                 _group_begins_at_first_step),
    "bounds-loosened-overrun": ("a loosened bounds check letting a kernel write past a user buffer",
                                _bounds_loosened_and_size_check_off),
    "alias-reserves-past-root": ("an alias reporting reserved bytes past its root's", _alias_reserves_past_root),
    "inner-axis-cut-as-view": ("a Split along an inner axis made a view", _inner_axis_cut_as_view),
    "conflict-never-spared": ("a conflict copy where the fused outputs feed a continuous input in order",
                              _conflict_never_spared),
}


@contextlib.contextmanager
def installed(name: str):
    """Bug ``name`` installed for the ``with`` block."""
    preload()
    with BUGS[name][1]():
        yield
