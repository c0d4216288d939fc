"""A finding of a campaign on another compiler, as a file that replays without that compiler.

The file holds the program (its data and its source), what was found (the claims its plan breaks,
or an output that differs from eager execution while every claim holds: a bug the spec missed),
the versions that made it, and the artefact itself (for XLA the four text files of the module, for
ExecuTorch the ``.pte`` file in base64, for TVM the module printed after its planning pass), so
``zcspec replay FILE`` re-reads the plan and re-checks it with neither compiler installed.
"""
from __future__ import annotations

import base64
import json
import math
import tempfile
from pathlib import Path

import attrs

from zcspec.checks.errors import CounterexampleError
from zcspec.checks.foreign import xla_dump
from zcspec.checks.foreign.iree_mlir import IreeDumpError, read_iree_dump
from zcspec.checks.foreign.pte import read_pte
from zcspec.checks.foreign.tflite import load_record, read_tflite
from zcspec.checks.foreign.tvm_relax import TvmRelaxError, read_relax
from zcspec.spec.check import check

FORMAT = "zcspec foreign finding 1"


@attrs.frozen
class ForeignFinding:
    planner: str
    kind: str                        # confirmed, hazard or miss (checks/foreign/xla_campaign.py)
    program: dict
    source: str
    claims: tuple[str, ...]          # the claims the plan breaks ((): a miss, see max_abs_diff)
    violations: tuple[str, ...]
    max_abs_diff: float | None       # the compiled result against eager execution (None: not run, or no
                                     # result: the compiled program crashed or hung; runs.json says which)
    artefact: dict                   # file suffix -> text
    versions: dict = attrs.field(factory=dict)

    def to_json(self) -> str:
        """Strict JSON (no NaN or Infinity, which jq and other readers refuse): a difference that is not a
        finite number, a crash's, is written as null."""
        data = attrs.asdict(self)
        if data["max_abs_diff"] is not None and not math.isfinite(data["max_abs_diff"]):
            data["max_abs_diff"] = None
        return json.dumps({"format": FORMAT, **data}, indent=1, sort_keys=True, allow_nan=False)

    def save(self, path: str) -> None:
        Path(path).write_text(self.to_json() + "\n")

    @classmethod
    def load(cls, path: str) -> "ForeignFinding":
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise CounterexampleError(f"{path}: cannot be read as JSON: {e}") from e
        if not is_finding(data):
            raise CounterexampleError(f"{path}: not a foreign finding (format {data.get('format')!r})")
        try:
            return cls(planner=str(data["planner"]), kind=str(data["kind"]), program=dict(data["program"]),
                       source=str(data["source"]),
                       claims=tuple(data["claims"]), violations=tuple(data["violations"]),
                       max_abs_diff=data.get("max_abs_diff"), artefact=dict(data["artefact"]),
                       versions=dict(data.get("versions") or {}))
        except (KeyError, TypeError, ValueError) as e:
            raise CounterexampleError(f"{path}: a foreign finding needs planner, program, source, claims, "
                                      f"violations and artefact ({e})") from e


def is_finding(data) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


@attrs.frozen
class FindingReplay:
    finding: ForeignFinding
    still_fails: bool
    violations: tuple[str, ...]

    def summary(self) -> str:
        f = self.finding
        diff = "no result (it crashed or hung)" if f.max_abs_diff is None else \
            f"a result that differed from eager by {f.max_abs_diff:.3g}"
        what = (f"{f.kind}: {', '.join(f.claims)} on a {f.planner} program of {len(f.program.get('steps', f.program.get('ops', ())))} "
                f"steps (it gave {diff})" if f.claims else f"a {f.planner} program that gave {diff} "
                "with every claim holding (a miss: replay re-checks the plan only)")
        state = ("still fails:\n" + "\n".join(f"  {v}" for v in self.violations)) if self.still_fails else \
            "passes now (the claims hold on the kept artefact)"
        return f"{what}: {state}"


def _plans(f: ForeignFinding, tmp: Path) -> list:
    """The plans of the finding's kept artefact (one per execution path), written out under ``tmp``
    and read back."""
    if f.planner == "xla":
        for suffix, text in f.artefact.items():
            if suffix not in xla_dump.SUFFIXES:
                raise CounterexampleError(f"the finding's artefact has a file {suffix!r}; expected {xla_dump.SUFFIXES}")
            (tmp / f"jit_f.cpu_after_optimizations{suffix}").write_text(text)
        return [xla_dump.read_module(xla_dump.find_modules(tmp)[0])]
    if f.planner == "executorch":
        try:
            (tmp / "program.pte").write_bytes(base64.b64decode(f.artefact["program.pte"], validate=True))
        except (KeyError, TypeError, ValueError) as e:
            raise CounterexampleError(f"an executorch finding keeps its program as base64 'program.pte' ({e})") from e
        return [plan for _, plan in read_pte(tmp / "program.pte")[1]]
    if f.planner == "litert":
        try:
            (tmp / "model.tflite").write_bytes(base64.b64decode(f.artefact["model.tflite"], validate=True))
            (tmp / "arena.json").write_text(f.artefact["arena.json"])
        except (KeyError, TypeError, ValueError) as e:
            raise CounterexampleError(f"a litert finding keeps 'model.tflite' (base64) and 'arena.json' ({e})") from e
        return [read_tflite(tmp / "model.tflite", load_record(str(tmp / "arena.json")))]
    if f.planner == "iree":
        if "layout.txt" not in f.artefact:
            raise CounterexampleError("an iree finding keeps the compiler's dump as 'layout.txt'")
        (tmp / "layout.txt").write_text(f.artefact["layout.txt"])
        try:
            return [plan for _, plan in read_iree_dump(tmp / "layout.txt")]
        except IreeDumpError as e:
            if "has no function that packs" in str(e):
                return []
            raise
    if f.planner == "tvm":
        if "relax.txt" not in f.artefact:
            raise CounterexampleError("a tvm finding keeps the module printed after StaticPlanBlockMemory as "
                                      "'relax.txt'")
        (tmp / "relax.txt").write_text(f.artefact["relax.txt"])
        try:
            return [p.plan for p in read_relax(tmp / "relax.txt")]
        except TvmRelaxError as e:
            if "has no Relax function that allocates memory" in str(e):
                return []
            raise
    raise CounterexampleError(f"a foreign finding of planner {f.planner!r}; known: executorch, iree, litert, tvm, xla")


def replay_finding(f: ForeignFinding) -> FindingReplay:
    """Re-read the kept artefact and check it: still failing while any of the finding's claims (or, for
    a miss, any claim) is broken."""
    with tempfile.TemporaryDirectory() as tmp:
        plans = _plans(f, Path(tmp))
    wanted = set(f.claims)
    hits = tuple(str(v) for plan in plans for v in check(plan).violations if not wanted or v.invariant_id in wanted)
    return FindingReplay(f, bool(hits), hits)
