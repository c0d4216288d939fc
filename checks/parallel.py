"""Run independent pieces of a campaign side by side: local processes, or a Dask cluster.

``run_tasks(fn, calls, workers=N)`` calls ``fn(*args, channel=ch)`` for every
``args`` of ``calls`` on N local processes (``concurrent.futures`` over
``multiprocessing``, forked, so a fault variant installed in the parent is in
every worker too; with N = 1, one after another in this process); ``cluster=ADDRESS`` sends the same calls to an existing Dask
distributed scheduler (``tcp://host:8786``; the ``cluster`` extra). The results
come back in the order of ``calls``, whatever order the workers finish in.

While the calls run, each may ``ch.put(message)`` (a small picklable value, e.g.
a progress count); the parent hands every message to ``on_message`` as it
arrives. Locally the channel is a manager queue; on Dask it is a
``distributed.Queue``. A call that raises makes ``run_tasks`` raise the same
error after the others are cancelled.

Why Dask rather than Ray: Dask distributed is pure Python (one wheel and a few
pure-Python dependencies, no daemon beyond its scheduler), starts a local
cluster in about a second from a test, and its scheduler address is all a
worker machine needs. Ray brings a native runtime of several hundred MB and an
object store sized to the machine's memory, which a 2-core CI box does not need.
"""
from __future__ import annotations

import multiprocessing
import queue as queue_module
import time
import uuid
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import Callable, Sequence

from zcspec.checks.errors import UsageError

POLL_SECONDS = 0.25


class LocalChannel:
    """Messages from local worker processes to the parent (a manager queue's proxy pickles)."""

    def __init__(self, q):
        self._q = q

    def put(self, message) -> None:
        self._q.put(message)

    def drain(self, timeout: float) -> list:
        out = []
        try:
            out.append(self._q.get(timeout=timeout))
            while True:
                out.append(self._q.get_nowait())
        except queue_module.Empty:
            pass
        return out


class DirectChannel:
    """Messages from calls run in this process: handed straight to the callback."""

    def __init__(self, on_message):
        self._on_message = on_message

    def put(self, message) -> None:
        if self._on_message:
            self._on_message(message)


class DaskChannel:
    """Messages from Dask workers to the client: a named ``distributed.Queue`` on the scheduler."""

    def __init__(self, name: str):
        self.name = name

    def put(self, message) -> None:
        distributed = _distributed()
        distributed.Queue(self.name, client=distributed.get_client()).put(message)

    def drain(self, timeout: float, client=None) -> list:
        distributed = _distributed()
        q = distributed.Queue(self.name, client=client)
        if not q.qsize():
            time.sleep(timeout)
            return []
        return list(q.get(batch=True))


def _distributed():
    try:
        import distributed
    except ImportError as e:   # the optional extra
        raise UsageError("--cluster needs Dask distributed, the optional extra: pip install 'zcspec[cluster]'") from e
    return distributed


def run_tasks(fn: Callable, calls: Sequence[tuple], *, workers: int = 1, cluster: str | None = None,
              on_message: Callable[[object], None] | None = None) -> list:
    """``[fn(*args, channel=...) for args in calls]``, computed side by side (see the module doc)."""
    if workers < 1:
        raise ValueError(f"run_tasks(): workers must be at least 1, got {workers!r}")
    if cluster:
        return _run_dask(fn, calls, cluster, on_message)
    if workers == 1:   # no process to start: the calls one after another, here
        channel = DirectChannel(on_message)
        return [fn(*args, channel=channel) for args in calls]
    return _run_local(fn, calls, workers, on_message)


def _run_local(fn, calls, workers, on_message) -> list:
    ctx = multiprocessing.get_context("fork")
    with ctx.Manager() as manager, ProcessPoolExecutor(max_workers=min(workers, len(calls)) or 1,
                                                       mp_context=ctx) as pool:
        channel = LocalChannel(manager.Queue())
        futures = [pool.submit(fn, *args, channel=channel) for args in calls]
        pending = set(futures)
        while pending:
            for m in channel.drain(POLL_SECONDS):
                if on_message:
                    on_message(m)
            done, pending = wait(pending, timeout=0, return_when=FIRST_EXCEPTION)
            failed = next((f for f in done if f.exception() is not None), None)
            if failed is not None:
                for f in pending:
                    f.cancel()
                raise failed.exception()
        for m in channel.drain(0.0):
            if on_message:
                on_message(m)
        return [f.result() for f in futures]


def _run_dask(fn, calls, address, on_message) -> list:
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout="10s")
    except OSError as e:
        raise UsageError(f"--cluster {address}: no Dask scheduler answers there ({e})") from e
    with client:
        channel = DaskChannel(f"zcspec-{uuid.uuid4().hex}")
        distributed.Queue(channel.name, client=client)   # created before any worker puts
        futures = [client.submit(fn, *args, channel=channel, pure=False) for args in calls]
        pending = set(futures)
        while pending:
            for m in channel.drain(POLL_SECONDS, client):
                if on_message:
                    on_message(m)
            pending = {f for f in pending if not f.done()}
            failed = next((f for f in futures if f.status == "error"), None)
            if failed is not None:
                client.cancel(list(pending))
                failed.result()   # raises the worker's error
        for m in channel.drain(0.1, client):
            if on_message:
                on_message(m)
        return client.gather(futures)
