"""``zcspec verify --artefacts DIR``: every artefact the run builds, written so that two runs compare byte for byte.

Per phase, one JSON line per case, in the order verify ran them (``zoo.jsonl``, ``frontend.jsonl``,
``node-tests.jsonl``, ``campaign.jsonl``, ...): the case's label, the spec's observations of it (each
plan, model file, load, execute call with its device trace and its outputs' digests, device probe, as
``spec.observables.codec`` writes them), for a compiled scenario the SHA-256 of what the compiler built
(the graph after the passes, the memory plan, the model file's bytes), what the case decided (refusals,
problems, proof statuses, replays), and the claims it exercised and broke. ``cases.tsv`` is the case
table: one row per case with its phase, label, observations, claims violated and the digest of its line.
``coverage.txt`` is the report's invariant table. ``DIGESTS`` lists the SHA-256 of each of those files,
sorted by name (``sha256sum`` format). ``verdict.json`` says how the run failed (the findings' claims,
the errors by kind, the failed valid calls, the proofs not proved, the corpus regressions, the claims
below the exercise floor); it is not in ``DIGESTS``, since it also lists Z3's unknowns, which depend on
the machine's load.

Nothing written depends on the machine or the hour: no timestamps, no timings, no absolute paths (the
checkout's folder and verify's temporary folders are written as ``<root>`` and ``<tmp>``), keys sorted,
cases in run order. Two runs of one configuration on the same sources (benchmarks/mutation_score.py sets
``PYTHONHASHSEED``) give identical files; a mutant of impl/ whose ``DIGESTS`` equal the unmutated run's
built nothing different on verify's cases.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.execution import races
from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.device import DEVICE_BASE, HOST_BASE
from zcspec.spec.observables.codec import to_data

DIGESTS = "DIGESTS"
VERDICT = "verdict.json"
CASES = "cases.tsv"
COVERAGE = "coverage.txt"
_ROOT = str(Path(__file__).resolve().parent.parent)
_TMP = re.compile(re.escape(tempfile.gettempdir()) + r"/zcspec-[A-Za-z0-9_.-]+")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")   # a default repr's object address, in an error's text
_COMPILED_KINDS = ("plan", "model_file", "execution")
ADDRESS_SPACE = min(DEVICE_BASE, HOST_BASE)   # every device or host address is at least this; no size or count is


def _scrub(text: str) -> str:
    """``text`` without what differs between two copies of the sources or two runs: paths, object addresses."""
    return _ADDRESS.sub(" at 0x?", _TMP.sub("<tmp>", text.replace(_ROOT, "<root>")))


def _canonical(data) -> str:
    return _scrub(json.dumps(data, sort_keys=True, separators=(",", ":"), default=_opaque))


def _opaque(value) -> str:
    """A value JSON cannot hold (bytes, an array): its type and digest, never its address."""
    raw = value if isinstance(value, (bytes, bytearray)) else repr(value).encode()
    return f"<{type(value).__name__} sha256:{hashlib.sha256(raw).hexdigest()}>"


def _schedule_free(observations: list) -> list:
    """The observations of a scenario whose calls race, in a form the threads' schedule does not decide.

    Which racing call takes the runtime's lock (v1) or the caching allocator's blocks (v2) first varies
    from run to run, and with it the order the calls are recorded in, which of them shows the unload,
    and the addresses each call's buffers and workspaces got. Every address (an integer in the device's
    or the host's address space, ``ADDRESS_SPACE`` and above) is written as ``"<address>"`` and the calls are
    sorted by their text: what each call did, its outputs and its verdict still compare byte for byte."""
    def mask(value):
        if isinstance(value, dict):
            return {k: mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mask(v) for v in value]
        if isinstance(value, int) and not isinstance(value, bool) and value >= ADDRESS_SPACE:
            return "<address>"
        return value
    return sorted((mask(o) for o in observations), key=_canonical)


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def compiled(scenario) -> dict:
    """The SHA-256 of what the compiler builds for ``scenario`` (a plan, model-file or execution one):
    the graph after the passes, the memory plan and the model file's bytes; or the compiler's error.
    Compiling is pure (impl/compiler/compile.py), so this is what the scenario's observer compiled."""
    if scenario.kind not in _COMPILED_KINDS:
        return {}
    try:
        stages = compile_stages(scenario.graph, scenario.compile)
        return {"graph": _sha(_canonical(graph_json.to_dict(stages.graph))),
                "plan": _sha(_canonical(to_json(stages.plan))),
                "model_file": _sha(encode(stages.model))}
    except Exception as e:  # the code under test refused or crashed: what it said is the artefact
        return {"error": f"{type(e).__name__}: {e}"}


@attrs.define
class ArtefactWriter:
    """Writes each case as verify checks it; ``folder`` None writes nothing (verify without --artefacts)."""

    folder: Path | None = None
    rows: list = attrs.Factory(list)
    _open: dict = attrs.Factory(dict)

    @classmethod
    def into(cls, folder: str | Path | None) -> "ArtefactWriter":
        """A writer into ``folder``, created if missing; UsageError if it exists and is not an empty folder
        (files of an older run would be listed beside this one's)."""
        if folder is None:
            return cls()
        path = Path(folder)
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise UsageError("--artefacts needs a new or empty folder (the files of another run would mix "
                             "with this one's)", file=str(folder))
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"cannot create the folder: {e.strerror}", file=str(folder)) from e
        return cls(path)

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def case(self, phase: str, label: str, *, scenario=None, observations=(), reports=(), **decided) -> None:
        """One case of ``phase``: its ``observations`` (and their ``reports``), what the compiler built
        for its ``scenario``, and whatever else the case ``decided`` (plain JSON data)."""
        if self.folder is None:
            return
        data = [to_data(o) for o in observations]
        if scenario is not None and races(scenario):
            data = _schedule_free(data)
        entry = {"case": label, "observations": data,
                 "exercised": sorted({i for r in reports for i in r.exercised}),
                 "violated": sorted({v.invariant_id for r in reports for v in r.violations}), **decided}
        if scenario is not None:
            entry["compiled"] = compiled(scenario)
        line = _canonical(entry)
        self._file(phase).write(line + "\n")
        self.rows.append((phase, _scrub(label), str(len(entry["observations"])), ",".join(entry["violated"]),
                          _sha(line)))

    def _file(self, phase: str):
        if phase not in self._open:
            self._open[phase] = open(self.folder / f"{phase}.jsonl", "w", encoding="utf-8", newline="\n")
        return self._open[phase]

    def finish(self, coverage_lines: list[str], verdict: dict) -> None:
        """Close the phase files; write the case table, the coverage table, ``verdict`` and the digests."""
        if self.folder is None:
            return
        for f in self._open.values():
            f.close()
        self._open.clear()
        table = ["phase\tcase\tobservations\tviolated\tsha256"] + ["\t".join(r) for r in self.rows]
        (self.folder / CASES).write_text("\n".join(table) + "\n", encoding="utf-8")
        (self.folder / COVERAGE).write_text("\n".join(coverage_lines) + "\n", encoding="utf-8")
        (self.folder / VERDICT).write_text(_scrub(json.dumps(verdict, indent=1, sort_keys=True)) + "\n",
                                           encoding="utf-8")
        digests = [f"{_sha(p.read_bytes())}  {p.name}" for p in sorted(self.folder.iterdir())
                   if p.name not in (DIGESTS, VERDICT)]
        (self.folder / DIGESTS).write_text("\n".join(digests) + "\n", encoding="utf-8")


def read_digests(folder: str | Path) -> dict[str, str]:
    """File name -> SHA-256 from ``folder``'s DIGESTS; FileNotFoundError if the run wrote none."""
    lines = (Path(folder) / DIGESTS).read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines if line)}


# At most this many items of each list in verdict.json (a mutant that breaks everything makes thousands).
VERDICT_ITEMS = 50


def verdict(result, ids, *, ok: bool, thin) -> dict:
    """How a verify run ended, for a reader that must attribute its failure (benchmarks/mutation_score.py):
    ``result`` a VerifyResult, ``ids`` every claim's id, ``ok`` the run's verdict, ``thin`` the claims
    below the exercise floor."""
    claims: dict[str, int] = {}
    for f in result.findings:
        claims[f.violation.invariant_id] = claims.get(f.violation.invariant_id, 0) + 1
    errors = [{"case": case, "kind": kind, "message": message[:300]}
              for (case, message), kind in zip(result.errors, result.error_kinds)]
    kinds: dict[str, int] = {}
    for e in errors:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    cx = result.counterexample
    return {
        "ok": ok,
        "stopped": result.stopped,
        "claims": claims,
        "findings": [{"case": f.case, "claim": f.violation.invariant_id} for f in result.findings[:VERDICT_ITEMS]],
        "counterexample": None if cx is None else cx.invariant,
        "error_kinds": kinds,
        "errors": errors[:VERDICT_ITEMS],
        "failed_calls": [{"run": n.run, "reason": n.reason[:300]} for n in result.failed_calls[:VERDICT_ITEMS]],
        "failed_call_count": len(result.failed_calls),
        "proofs_failed": [{"case": case, "status": p.status, "kind": p.kind}
                          for case, p in result.proofs if not p.passed][:VERDICT_ITEMS],
        "corpus_regressed": [{"claim": r.counterexample.invariant, "error": r.error,
                              "violations": [str(v)[:300] for v in r.violations]}
                             for r in result.corpus if not r.as_expected],
        "below_floor": sorted(thin),
        "never_exercised": sorted(result.unexercised(ids)),
    }


def first_difference(before: str | Path, after: str | Path) -> str:
    """Where the artefacts in folder ``after`` first differ from those in ``before`` ("" when all are
    identical): the files whose digests differ, and the first case (in run order) whose line differs."""
    a, b = read_digests(before), read_digests(after)
    files = sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))
    if not files:
        return ""
    rows_a, rows_b = _rows(before), _rows(after)
    case = next((f"{ra[0]} case {ra[1]!r}" if ra[:2] == rb[:2] else f"{ra[0]} case {ra[1]!r} vs {rb[0]} case {rb[1]!r}"
                 for ra, rb in zip(rows_a, rows_b) if ra != rb), "")
    if not case and len(rows_a) != len(rows_b):
        case = f"{len(rows_a)} cases before, {len(rows_b)} after"
    return f"{', '.join(files)} differ" + (f"; first: {case}" if case else "")


def _rows(folder) -> list[list[str]]:
    rows = (Path(folder) / CASES).read_text(encoding="utf-8").splitlines()[1:]
    return [row.split("\t") for row in rows if row]
