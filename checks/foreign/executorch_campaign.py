"""The ExecuTorch campaign: Hypothesis draws torch programs, ExecuTorch plans them, the spec checks the plans.

Each drawn program (checks/foreign/torch_programs.py) is exported with ExecuTorch's default
pipeline (``torch.export``, ``to_edge``, ``to_executorch``) by a worker process running a Python
that has torch and ExecuTorch (``--python``; ExecuTorch pins its own torch, so a separate
environment is the usual case). The worker also runs the program with ExecuTorch's runtime on
three inputs against eager PyTorch, the oracle, and sends back the ``.pte`` bytes; this process
reads the plans from them, one per execution path (checks/foreign/pte.py), and checks them. A
program may set a backend config (``reinplace_extra_ops``, checks/foreign/torch_programs.py), so a
bug may need it: shrinking keeps a finding on the same side (:func:`bug_class`). Kinds of program,
the loop, shrinking and the finding file are checks/foreign/campaign_core.py's.
"""
from __future__ import annotations

import base64
import json
import subprocess
import tempfile
from pathlib import Path

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.campaign_core import write_finding as _write
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
    torch.manual_seed(0)   # the programs draw their weights and inputs: the same ones every time
    try:
        namespace = {}
        exec(request["source"], namespace)
        m, args = namespace["M"]().eval(), namespace["args"]
        prog = to_edge(export(m, args[0])).to_executorch(namespace.get("config"))   # a source may set a backend config
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
    diff = float(reply["max_abs_diff"])
    return Outcome(program, claims, violations, diff, diff <= TOLERANCE, {"program.pte": reply["pte"]})


def bug_class(worker: Worker, outcome: Outcome) -> str:
    """``"backend config"`` when the bug goes away with the program planned without its drawn
    ``reinplace_extra_ops`` (the class of pytorch/executorch#21840), else ``"program"`` (as
    pytorch/executorch#21490's: two higher-order ops). One more export for a program with a config."""
    if not outcome.program.reinplace:
        return "program"
    plain = run_program(worker, attrs.evolve(outcome.program, reinplace=()))
    return "backend config" if plain is not None and plain.kind not in ("confirmed", "miss") else "program"


def campaign(python: str, *, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             higher_order: bool = True, progress=lambda s: None) -> CampaignResult:
    """Draw up to ``examples`` programs (stop drawing after ``budget`` seconds) and export each with
    ``python``'s ExecuTorch; the first confirmed bug or miss, shrunk within its :func:`bug_class`.
    ``higher_order=False`` draws no ``cond`` or ``map``: a campaign that looks past
    pytorch/executorch#21490, open in every release so far, which some seeds find first."""
    worker = Worker(python)
    try:
        result = run_campaign(torch_programs(max_steps=max_steps, higher_order=higher_order),
                              lambda p: run_program(worker, p),
                              examples=examples, seed=seed, budget=budget, progress=progress,
                              bug_class=lambda o: bug_class(worker, o))
    finally:
        worker.close()
    result.versions = worker.versions
    return result


def write_finding(outcome: Outcome, folder: str, versions: dict) -> str:
    return _write("executorch", outcome, folder, versions)
