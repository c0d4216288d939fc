"""The exhaustive mode on several processes or a Dask cluster, with exactly the single-process result.

The enumeration is deterministic, so it is sharded by graph: shard ``i`` of
``n`` checks the graphs ``exhaustive_k`` with ``k % n == i`` (every shard walks
the whole enumeration, a small part of the cost of checking it, and builds
and checks only its own graphs). ``merge_runs`` adds the tallies and orders the
failures by graph, so the union of the shards is the single-process run: same
graph count, same tally, same failures in the same order.

Alongside the shards one task counts the graphs (``count_graphs``), so the
progress line can show the time left once it is known.
"""
from __future__ import annotations

from typing import Callable

from zcspec.checks.exhaustive import ExhaustiveRun, count_graphs, merge_runs, run_exhaustive
from zcspec.checks.parallel import run_tasks

PROGRESS_EVERY = 50   # graphs between a shard's progress messages


def _count_task(max_nodes: int, graph_args: dict, *, channel) -> int:
    total = count_graphs(max_nodes, **graph_args)
    channel.put(("total", total))
    return total


def _shard_task(max_nodes: int, kinds: tuple, strategies: tuple, soc: str, graph_args: dict,
                shard: tuple[int, int], *, channel) -> ExhaustiveRun:
    def progress(done, _seconds, failures):
        channel.put(("shard", shard[0], done, failures))
    return run_exhaustive(max_nodes, kinds, strategies, progress, soc=soc, every=PROGRESS_EVERY, shard=shard,
                          **graph_args)


def run_exhaustive_sharded(max_nodes: int, kinds: tuple[str, ...] = ("plan", "model_file"),
                           strategies: tuple[str, ...] = ("ge", "compact"), *, workers: int = 1,
                           cluster: str | None = None, shards: int | None = None, soc: str = "ascend910b",
                           on_progress: Callable[[int, int, int | None], None] | None = None,
                           **graph_args) -> ExhaustiveRun:
    """``run_exhaustive`` split into ``shards`` (default: ``workers``) run on ``workers`` local
    processes or on the Dask scheduler at ``cluster``; the merged result equals the single-process
    run. ``on_progress(graphs_done, failures_so_far, total_or_None)`` is called as shards report."""
    shards = shards or workers
    if shards < 1:
        raise ValueError(f"run_exhaustive_sharded(): shards must be at least 1, got {shards!r}")
    done: dict[int, tuple[int, int]] = {}
    total: list = [None]

    def message(m):
        if m[0] == "total":
            total[0] = m[1]
        else:
            done[m[1]] = (m[2], m[3])
        if on_progress:
            on_progress(sum(d for d, _ in done.values()), sum(f for _, f in done.values()), total[0])

    calls = [(max_nodes, dict(graph_args))] + [(max_nodes, tuple(kinds), tuple(strategies), soc, dict(graph_args),
                                                (i, shards)) for i in range(shards)]
    results = run_tasks(_dispatch, [(k, c) for k, c in enumerate(calls)], workers=workers + 1, cluster=cluster,
                        on_message=message)
    runs = results[1:]
    if sum(r.graphs for r in runs) != results[0]:   # the shards missed or repeated a graph
        raise RuntimeError(f"exhaustive shards checked {sum(r.graphs for r in runs)} graphs; "
                           f"the enumeration has {results[0]}")
    return merge_runs(runs)


def _dispatch(k: int, args: tuple, *, channel):
    return _count_task(*args, channel=channel) if k == 0 else _shard_task(*args, channel=channel)
