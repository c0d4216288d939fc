"""``zcspec plan --buffers FILE.csv``: pack a bare interval instance (MiniMalloc's CSV).

``--strategy ge``: no graph here, so GE's first-stage block assignment
reduces to its core rule, greedy by size with first fit (the lowest gap that
holds the buffer). ``--strategy compact``: :func:`zcspec.impl.compiler.memory.packing.pack`.
``--json`` prints exactly ``{"arena": bytes, "offsets": {"<id>": offset}}``
(the plan contract). With ``--capacity`` the exit code is 1 when the packing
found does not fit in it. Before anything is printed the packing is judged by
``zcspec.checks.packing_check`` (code shared with no packer): a packing that
breaks a rule raises InvalidPackingError, a bug of the packer, never printed.
"""
from __future__ import annotations

import json
import time

from zcspec.checks.errors import UsageError
from zcspec.checks.packing_check import check
from zcspec.impl.compiler.memory.packing import Packing, greedy, lower_bound, pack, read_minimalloc_csv


def configure_buffers(parser) -> None:
    """The flags only ``--buffers`` uses (``plan.py`` adds ``--buffers``, ``--strategy``, ``--json``)."""
    parser.add_argument("--capacity", type=int, default=None, metavar="N",
                        help="with --buffers: search until the arena fits in N bytes (exit 1 if it does not)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="with --buffers: stop improving after S seconds (default: fixed budgets, deterministic)")


def configure(parser) -> None:
    """Every flag, for running this module on its own (tests, scripts)."""
    parser.add_argument("--buffers", required=True, metavar="FILE.csv", help="MiniMalloc CSV: id,lower,upper,size")
    parser.add_argument("--strategy", choices=("ge", "compact"), default="ge")
    parser.add_argument("--json", action="store_true", help='print {"arena": ..., "offsets": {...}}')
    configure_buffers(parser)


def plan_ge(buffers) -> Packing:
    """Greedy by size, first fit: the ``ge`` strategy on a bare instance."""
    inst = greedy.Instance.of(buffers)
    offsets = greedy.first_fit(inst, greedy.order_by_size(inst))
    return Packing.placed(buffers, offsets, lower_bound=lower_bound(buffers), method="greedy-size-first-fit")


def run(args) -> int:
    capacity, limit = getattr(args, "capacity", None), getattr(args, "time_limit", None)
    if capacity is not None and capacity < 0:
        raise UsageError(f"--capacity={capacity!r} must be a non-negative number of bytes")
    if limit is not None and limit <= 0:
        raise UsageError(f"--time-limit={limit!r} must be a positive number of seconds")
    buffers = read_minimalloc_csv(args.buffers)
    start = time.perf_counter()
    if getattr(args, "strategy", "ge") == "compact":
        result = pack(buffers, time_limit=limit, capacity=capacity)
    else:
        result = plan_ge(buffers)
    seconds = time.perf_counter() - start
    check(buffers, result)   # not against the capacity: missing it is exit code 1, not a broken packing
    fits = capacity is None or result.arena <= capacity
    if args.json:
        print(json.dumps({"arena": result.arena, "offsets": result.offsets}))
        return 0 if fits else 1
    lb = lower_bound(buffers)
    ratio = result.arena / lb if lb else 1.0
    print(f"{args.buffers}: {len(buffers)} buffers")
    print(f"  arena        {result.arena:>14,} bytes{'  (optimal, proved)' if result.optimal else ''}")
    print(f"  lower bound  {lb:>14,} bytes   ratio {ratio:.4f}")
    if not result.optimal and result.bound > lb:
        print(f"  proved bound {result.bound:>14,} bytes   gap {result.arena / result.bound - 1:.2%} "
              "(no packing needs fewer: the search ruled smaller arenas out)")
    elif not result.optimal:
        print(f"  gap          {ratio - 1:.2%} to the lower bound, not closed (give more --time-limit)")
    if capacity is not None:
        share = f" ({result.arena / capacity:.4f}x)" if capacity else ""
        print(f"  capacity     {capacity:>14,} bytes   {'fits' if fits else 'DOES NOT FIT'}{share}")
    print(f"  method       {result.method}")
    print(f"  time         {seconds:.3f} s")
    return 0 if fits else 1
