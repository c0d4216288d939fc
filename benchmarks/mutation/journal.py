"""A mutation run's journal: each verdict is appended as soon as a judge gives it, so that a run stopped
before its end (a session's end, Ctrl-C, a crash of the machine) resumes where it stopped.

A figure run takes hours on two cores (verify on 40 mutants, then the suite on those whose artefacts are
identical); twice one was killed after most of its verdicts and left nothing. The journal is a JSON-lines
file: a header naming the run (``Identity``: the commit, the seed, the sample and every setting that
changes a verdict), then one record per verdict: the baseline's (its runs and the time limits they set),
a mutant's verify run (its kill and how its artefacts compared) and a mutant's suite run (with the tests it
was given, selection.py: their node ids, or none and why the whole suite, for a reader to audit). A line cut short
by a kill is ignored. A run asks ``Journal.open``: a journal of the same identity that is not finished is
resumed (its verdicts reused, the mutants' indexes and texts checked against the sample), any other is
replaced; ``finish`` marks it done when the result is written, so the next run starts afresh.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import attrs

from .attribution import Kill
from .mutator import Mutation
from .runs import Run

FORMAT = "zcspec-mutation-journal"
VERSION = 1


@attrs.frozen
class Identity:
    """What makes two runs one: the same mutants judged by the same judges under the same limits."""

    commit: str
    seed: int
    sample: int
    modules: tuple[str, ...]
    verify_args: tuple[str, ...]
    suite_args: tuple[str, ...]
    suite: str
    suite_workers: int
    verify_timeout: float | None
    suite_timeout: float | None

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(self).items()}


@attrs.frozen
class Recorded:
    """The baseline as a journal keeps it: its runs and the limits they set (its artefacts are not kept)."""

    verify: Run
    suite: Run | None
    verify_timeout: float
    suite_timeout: float


class Journal:
    """The verdicts of one run, on disk. Thread-safe: the judges record from a pool."""

    def __init__(self, path: Path, identity: Identity, records: list[dict]):
        self.path, self.identity = Path(path), identity
        self._lock = threading.Lock()
        self._baseline: Recorded | None = None
        self._verify: dict[int, tuple[dict, Run, Kill, str | None]] = {}
        self._suite: dict[int, tuple[dict, Run]] = {}
        for r in records:
            self._load(r)

    @classmethod
    def open(cls, path: Path, identity: Identity) -> "Journal":
        """The journal at ``path`` if it is an unfinished run of ``identity`` (then resumed), else a new one
        written over it."""
        header, records = _read(Path(path))
        if (header is not None and header.get("run") == identity.to_json()
                and not any(r.get("kind") == "finished" for r in records)):
            return cls(path, identity, records)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps({"format": FORMAT, "version": VERSION, "run": identity.to_json()}) + "\n",
                              encoding="utf-8")
        return cls(path, identity, [])

    @property
    def resumed(self) -> int:
        """How many verdicts were read back (0 for a new journal)."""
        return (self._baseline is not None) + len(self._verify) + len(self._suite)

    def baseline(self) -> Recorded | None:
        return self._baseline

    def verify(self, index: int, mutation: Mutation) -> tuple[Run, Kill, str | None] | None:
        got = self._verify.get(index)
        if got is None:
            return None
        _same(index, got[0], mutation)
        return got[1:]

    def suite(self, index: int, mutation: Mutation) -> Run | None:
        got = self._suite.get(index)
        if got is None:
            return None
        _same(index, got[0], mutation)
        return got[1]

    def record_baseline(self, verify: Run, suite: Run | None, verify_timeout: float, suite_timeout: float) -> None:
        self._baseline = Recorded(verify, suite, verify_timeout, suite_timeout)
        self._append({"kind": "baseline", "verify": verify.to_json(), "suite": suite.to_json() if suite else None,
                      "verify_timeout": verify_timeout, "suite_timeout": suite_timeout})

    def record_verify(self, index: int, mutation: Mutation, run: Run, kill: Kill, compared: str | None) -> None:
        self._verify[index] = (mutation.to_json(), run, kill, compared)
        self._append({"kind": "verify", "index": index, "mutation": mutation.to_json(), "run": run.to_json(),
                      "kill": attrs.asdict(kill), "artefacts": compared})

    def record_suite(self, index: int, mutation: Mutation, run: Run, selection: dict | None = None) -> None:
        self._suite[index] = (mutation.to_json(), run)
        self._append({"kind": "suite", "index": index, "mutation": mutation.to_json(), "run": run.to_json(),
                      "selection": selection})

    def finish(self) -> None:
        """The run's result is written: the next run with this identity starts afresh."""
        self._append({"kind": "finished"})

    def _append(self, record: dict) -> None:
        line = json.dumps(record) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def _load(self, r: dict) -> None:
        kind = r.get("kind")
        if kind == "baseline":
            self._baseline = Recorded(Run(**r["verify"]), Run(**r["suite"]) if r["suite"] else None,
                                      r["verify_timeout"], r["suite_timeout"])
        elif kind == "verify":
            k = r["kill"]
            kill = Kill(**{**k, **{f: tuple(k[f]) for f in ("claims", "oracle", "checks", "floor")}})
            self._verify[r["index"]] = (r["mutation"], Run(**r["run"]), kill, r["artefacts"])
        elif kind == "suite":
            self._suite[r["index"]] = (r["mutation"], Run(**r["run"]))


def read_header(path: Path) -> dict | None:
    """The journal's header with ``finished`` set (whether its run ended), or None when there is none."""
    header, records = _read(Path(path))
    if header is None:
        return None
    return {**header, "finished": any(r.get("kind") == "finished" for r in records)}


def _read(path: Path) -> tuple[dict | None, list[dict]]:
    """The header and the records of a journal file; a line that does not parse (the last one, cut short
    by a kill) ends the reading. (None, []) when there is no such file or it is not a journal."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None, []
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            break
    if not parsed or not isinstance(parsed[0], dict) or parsed[0].get("format") != FORMAT:
        return None, []
    return parsed[0], [r for r in parsed[1:] if isinstance(r, dict)]


def _same(index: int, recorded: dict, mutation: Mutation) -> None:
    if recorded != mutation.to_json():
        raise ValueError(f"the journal's mutant {index} is {recorded.get('path')}:{recorded.get('line')} "
                         f"{recorded.get('operator')}, the sample's is {mutation.label} {mutation.operator}: "
                         "the journal is not of this sample; remove it or run with --fresh")
