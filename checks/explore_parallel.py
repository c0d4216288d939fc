"""``zcspec explore`` on several processes or a Dask cluster, sharing one example database.

Worker ``i`` of ``n`` runs the campaigns of seeds ``seed + i, seed + i + n, ...``
(distinct seeds, so no two workers draw the same batch) for the time budget.
All share one Hypothesis directory database (``SharedDatabase``, a folder every
worker can reach): a failure one worker finds is saved there shrunk, and every
other worker replays it at the start of its next campaign, once. The
counterexamples of all workers are merged, one per claim and shrunk graph.
"""
from __future__ import annotations

import hashlib
import json

import attrs
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from zcspec.checks.campaign import EXPLORE_BATCH, Tally, explore
from zcspec.checks.parallel import run_tasks
from zcspec.checks.strategies.scenarios import scenarios


class SharedDatabase(ExampleDatabase):
    """Hypothesis's directory database on a shared folder, handing each stored example to this
    process's campaigns once: a failure is replayed once per worker, not by every later campaign
    (which would then only ever re-find it). ``replayed`` counts the examples taken from the folder
    that this process did not save itself."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self._db = DirectoryBasedExampleDatabase(path)
        self._seen: set = set()
        self.replayed = 0

    def fetch(self, key: bytes):
        for value in self._db.fetch(key):
            if (key, value) in self._seen:
                continue
            self._seen.add((key, value))
            self.replayed += 1
            yield value

    def save(self, key: bytes, value: bytes) -> None:
        self._seen.add((key, value))
        self._db.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self._db.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._seen.add((dest, value))
        self._db.move(src, dest, value)


@attrs.frozen
class WorkerRun:
    """One worker's campaigns: the tally, its counterexamples and crashed seeds, and how many
    examples it replayed from the shared database."""

    worker: int
    tally: Tally
    counterexamples: tuple
    crashes: tuple
    replayed: int


@attrs.frozen
class ExploreRun:
    tally: Tally
    counterexamples: tuple      # one per (claim, shrunk graph), first worker first
    crashes: tuple
    workers: tuple              # WorkerRun of each worker


def explore_worker(worker: int, workers: int, max_nodes: int, seconds: float, seed: int,
                   database: str | None, batch: int = EXPLORE_BATCH, *, channel) -> WorkerRun:
    """Worker ``worker`` of ``workers``: campaigns of ``batch`` examples, seeds ``seed + worker``
    stepping by ``workers``, until ``seconds`` have passed (at least one campaign)."""
    db = SharedDatabase(database) if database else None
    crashes: list = []

    def on_batch(tally, _elapsed):
        channel.put((worker, tally.cases, sum(tally.violated.values())))
    tally, found = explore(scenarios(max_nodes=max_nodes), seconds=seconds, seed=seed + worker, seed_step=workers,
                           on_batch=on_batch, crashes=crashes, database=db, batch=batch)
    return WorkerRun(worker, tally, tuple(found), tuple(crashes), db.replayed if db else 0)


def graph_key(counterexample) -> str:
    """A fingerprint of a counterexample's claim and shrunk graph (what deduplication compares)."""
    graph = counterexample.scenario.to_dict()["graph"]
    text = json.dumps([counterexample.invariant, graph], sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def merge_workers(runs) -> ExploreRun:
    tally, found, seen, crashes = Tally(), [], set(), []
    for r in sorted(runs, key=lambda r: r.worker):
        tally.merge(r.tally)
        crashes.extend(r.crashes)
        for cx in r.counterexamples:
            if (key := graph_key(cx)) not in seen:
                seen.add(key)
                found.append(cx)
    return ExploreRun(tally, tuple(found), tuple(crashes), tuple(sorted(runs, key=lambda r: r.worker)))


def run_explore(max_nodes: int, seconds: float, *, seed: int = 0, workers: int = 1, cluster: str | None = None,
                database: str | None = None, on_progress=None) -> ExploreRun:
    """``workers`` explore workers (local processes, or tasks on the Dask scheduler at ``cluster``)
    for ``seconds`` each, sharing the example database folder ``database`` (None: none).
    ``on_progress(cases, violations)`` totals over the workers as they report."""
    latest: dict = {}

    def message(m):
        latest[m[0]] = m[1:]
        if on_progress:
            on_progress(sum(c for c, _ in latest.values()), sum(v for _, v in latest.values()))

    calls = [(i, workers, max_nodes, seconds, seed, database) for i in range(workers)]
    return merge_workers(run_tasks(explore_worker, calls, workers=workers, cluster=cluster, on_message=message))
