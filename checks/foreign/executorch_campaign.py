"""The ExecuTorch campaign: Hypothesis draws torch programs, ExecuTorch plans them, the spec checks the plans.

Each drawn program (checks/foreign/torch_programs.py) is exported with ExecuTorch's default
pipeline (``torch.export``, ``to_edge``, ``to_executorch``) by a worker process running a Python
that has torch and ExecuTorch (``--python``; ExecuTorch pins its own torch, so a separate
environment is the usual case). The worker also runs the program with ExecuTorch's runtime on
three inputs against eager PyTorch, the oracle, and sends back the ``.pte`` bytes; this process
reads the plan from them (checks/foreign/pte.py) and checks it. Kinds of program, the stopping
rule, shrinking and the finding file are those of the XLA campaign (checks/foreign/xla_campaign.py).
"""
from __future__ import annotations

import base64
import json
import subprocess
import tempfile
import time
from pathlib import Path

import attrs
from hypothesis import HealthCheck, given, seed as hseed, settings

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.finding import ForeignFinding
from zcspec.checks.foreign.pte import read_pte
from zcspec.checks.foreign.torch_programs import TorchProgram, torch_programs
from zcspec.spec.check import check

TOLERANCE = 1e-4

_WORKER = r"""
import base64, json, sys, traceback
import torch
from torch.export import export
from executorch.exir import to_edge
from executorch.runtime import Runtime
from importlib.metadata import version
runtime = Runtime.get()
print(json.dumps({"ready": True, "torch": torch.__version__, "executorch": version("executorch")}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    try:
        namespace = {}
        exec(request["source"], namespace)
        m, args = namespace["M"]().eval(), namespace["args"]
        prog = to_edge(export(m, args[0])).to_executorch()
        method = runtime.load_program(prog.buffer).load_method("forward")
        worst = 0.0
        for a in args:
            got = method.execute(list(a))
            want = m(*a)
            want = want if isinstance(want, (tuple, list)) else (want,)
            worst = max([worst] + [float((g - w).abs().max()) for g, w in zip(got, want)])
        reply = {"pte": base64.b64encode(prog.buffer).decode(), "max_abs_diff": worst}
    except Exception as e:
        reply = {"error": f"{type(e).__name__}: {e}"[:2000]}
    print(json.dumps(reply), flush=True)
"""


class Worker:
    """A Python with torch and ExecuTorch that exports and runs programs on request."""

    def __init__(self, python: str):
        try:
            self.proc = subprocess.Popen([python, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True)
        except OSError as e:
            raise UsageError(f"cannot start {python}: {e.strerror or e}") from e
        hello = self.proc.stdout.readline()
        if not hello:
            raise UsageError(f"{python} has no torch and ExecuTorch to export with (pip install torch executorch, or "
                             "give --python of an environment that has them)")
        self.versions = {k: v for k, v in json.loads(hello).items() if k != "ready"}

    def run(self, source: str) -> dict:
        self.proc.stdin.write(json.dumps({"source": source}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the ExecuTorch worker died")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


@attrs.frozen
class Outcome:
    program: TorchProgram
    claims: tuple[str, ...]
    violations: tuple[str, ...]
    max_abs_diff: float
    artefact: dict

    @property
    def matches(self) -> bool:
        return self.max_abs_diff <= TOLERANCE

    @property
    def kind(self) -> str:
        if self.claims:
            return "hazard" if self.matches else "confirmed"
        return "clean" if self.matches else "miss"


def run_program(worker: Worker, program: TorchProgram) -> Outcome | None:
    """Export, run, read and check one program; None when ExecuTorch could not export it."""
    reply = worker.run(program.source())
    if "error" in reply:
        return None
    data = base64.b64decode(reply["pte"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "program.pte"
        path.write_bytes(data)
        _, paths = read_pte(path)
    reports = [(label, check(plan)) for label, plan in paths]
    claims = tuple(sorted({i for _, r in reports for i in r.violated()}))
    violations = tuple(f"[{label}] {v}" if label else str(v) for label, r in reports for v in r.violations)
    return Outcome(program, claims, violations, float(reply["max_abs_diff"]), {"program.pte": reply["pte"]})


class _Found(Exception):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        super().__init__(outcome.kind)


@attrs.define
class CampaignResult:
    programs: int = 0
    refused: int = 0
    seconds: float = 0.0
    finding: Outcome | None = None
    clean: int = 0
    hazards: int = 0
    first_hazard: Outcome | None = None
    versions: dict = attrs.Factory(dict)


def campaign(python: str, *, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             progress=lambda s: None) -> CampaignResult:
    result = CampaignResult()
    worker = Worker(python)
    result.versions = worker.versions
    start = time.monotonic()

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(torch_programs(max_steps=max_steps))
    def probe(program):
        if time.monotonic() - start > budget and result.finding is None:
            return
        outcome = run_program(worker, program)
        result.programs += 1
        if result.programs % 10 == 0:
            progress(f"  {result.programs} programs, {time.monotonic() - start:.0f} s, {result.hazards} hazard(s)")
        if outcome is None:
            result.refused += 1
        elif outcome.kind in ("confirmed", "miss"):
            result.finding = outcome
            raise _Found(outcome)
        elif outcome.kind == "hazard":
            result.hazards += 1
            result.first_hazard = result.first_hazard or outcome
        else:
            result.clean += 1

    try:
        probe()
    except _Found as found:
        result.finding = found.outcome
    finally:
        worker.close()
    result.seconds = time.monotonic() - start
    return result


def write_finding(outcome: Outcome, folder: str, versions: dict) -> str:
    Path(folder).mkdir(parents=True, exist_ok=True)
    claims = "-".join(c.lower() for c in outcome.claims)
    path = str(Path(folder) / f"executorch-{outcome.kind}{'-' + claims if claims else ''}-"
                              f"{len(outcome.program.steps)}-steps.json")
    ForeignFinding("executorch", outcome.kind, outcome.program.to_data(), outcome.program.source(), outcome.claims,
                   outcome.violations, outcome.max_abs_diff, outcome.artefact, dict(versions)).save(path)
    return path
