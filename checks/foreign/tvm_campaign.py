"""The TVM campaign: Hypothesis draws Relax programs, TVM plans them, the spec checks the plans.

Each drawn program (checks/foreign/relax_programs.py) is compiled with TVM's default Relax build
(``tvm.compile(mod, target="llvm")``) by a worker process running a Python that has TVM
(``--python``: one environment per TVM release is the usual case). The worker keeps the Relax
functions as the build printed them right after ``relax.transform.StaticPlanBlockMemory`` (the text
checks/foreign/tvm_relax.py reads, as for the kept programs) and runs the compiled module on the
program's inputs, one per execution path (each choice at its ifs), when asked. This process reads
the plans, one per path, checks them, and compares each run with the program's NumPy reference
(the oracle). A run that crashes the worker (TVM's VM on memory that is not there: a segfault),
hangs, or raises is a wrong result; the worker is started afresh after it, and after any wrong
run, so a corrupted heap cannot reach the next program. Kinds of program, the loop, shrinking and
the finding file (which keeps the printed module, so ``zcspec replay`` re-checks it with no TVM)
are checks/foreign/campaign_core.py's.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import math
import select
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.campaign_core import write_finding as _write
from zcspec.checks.foreign.relax_programs import RelaxProgram, relax_programs
from zcspec.checks.foreign.tvm_relax import TvmRelaxError, read_relax
from zcspec.spec.check import check

RTOL, ATOL = 1e-3, 1e-4
COMPILE_SECONDS, RUN_SECONDS, START_SECONDS = 300.0, 60.0, 300.0

# Protocol lines go to a copy of fd 1; fd 1 itself goes to stderr (discarded), so nothing TVM or its
# C++ side prints can be taken for a reply. A program's source is imported from a file: TVMScript's
# parser reads the class's source back with ``inspect``.
_WORKER = r"""
import importlib.util, json, os, sys
reply_to = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
import numpy as np, tvm
from tvm import relax

def send(obj):
    reply_to.write(json.dumps(obj) + "\n")
    reply_to.flush()

kept = []

@tvm.instrument.pass_instrument
class _Keep:
    def run_after_pass(self, mod, info):
        if info.name == "StaticPlanBlockMemory":
            kept.append("\n".join(f.script() for _, f in sorted(mod.functions_items(), key=lambda kv: kv[0].name_hint)
                                  if isinstance(f, relax.Function)))

build = getattr(tvm, "compile", None) or relax.build
wrap = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
send({"ready": True, "tvm": tvm.__version__, "numpy": np.__version__})
vm, folder = None, sys.argv[1]
for n, line in enumerate(sys.stdin):
    request = json.loads(line)
    try:
        if "source" in request:
            vm = None
            path = os.path.join(folder, f"program_{n}.py")
            with open(path, "w") as f:
                f.write(request["source"])
            spec = importlib.util.spec_from_file_location(f"zcspec_relax_program_{n}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            try:
                spec.loader.exec_module(module)
            finally:
                del sys.modules[spec.name]
            kept.clear()
            with tvm.transform.PassContext(instruments=[_Keep()]):
                ex = build(module.Module, target="llvm")
            vm = relax.VirtualMachine(ex, tvm.cpu())
            send({"text": kept[-1] if kept else ""})
            continue
        x = np.array(request["x"], dtype="float32").reshape(request["shape"])
        out = vm["main"](wrap(x), *[wrap(np.array(c)) for c in request["conds"]])
        outs = [out] if hasattr(out, "numpy") else list(out)
        send({"outputs": [[list(o.shape), o.numpy().astype("float64").ravel().tolist()] for o in outs]})
    except Exception as e:
        send({"error": f"{type(e).__name__}: {e}"[:2000]})
"""


class Worker:
    """A Python with TVM that compiles a program on request and runs it on inputs; restarted when it dies."""

    def __init__(self, python: str):
        self.python = python
        self._folder = tempfile.TemporaryDirectory(prefix="zcspec-tvm-")
        self.proc: subprocess.Popen | None = None
        self.source: str | None = None       # the program the running worker has compiled
        self.died = ""                       # how the last request ended the worker, if it did
        hello = self._start()
        if hello is None:
            raise UsageError(f"{python} has no TVM to compile with (pip install apache-tvm, or give --python of an "
                             "environment that has it)")
        self.versions = {k: v for k, v in hello.items() if k != "ready"}

    def _start(self) -> dict | None:
        try:
            self.proc = subprocess.Popen([self.python, "-c", _WORKER, self._folder.name], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError as e:
            raise UsageError(f"cannot start {self.python}: {e.strerror or e}") from e
        self.source = None
        return self._read(START_SECONDS)

    def _read(self, seconds: float) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
        line = self.proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        if not ready:
            self.proc.kill()
        code = self.proc.wait(timeout=30)
        self.died = f"timed out after {seconds:.0f} s" if not ready else \
            f"crashed: {signal.Signals(-code).name}" if code < 0 else f"exited with {code}"
        self.proc, self.source = None, None
        return None

    def request(self, data: dict, seconds: float) -> dict | None:
        """The worker's reply, or None when it died or hung on the request (``died`` says how)."""
        if self.proc is None and self._start() is None:
            raise RuntimeError(f"the TVM worker ({self.python}) did not start again: {self.died}")
        # A worker that died since its last reply breaks the pipe: _read then sees the end of its output
        # and says how it died.
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(json.dumps(data) + "\n")
            self.proc.stdin.flush()
        return self._read(seconds)

    def compile(self, source: str) -> dict | None:
        reply = self.request({"source": source}, COMPILE_SECONDS)
        self.source = source if reply is not None and "text" in reply else None
        return reply

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc, self.source = None, None

    def close(self) -> None:
        self.stop()
        self._folder.cleanup()


def _compare(got: list, want: list[np.ndarray]) -> tuple[float, bool]:
    """The largest difference of the outputs, and whether they match (shapes and values)."""
    if len(got) != len(want) or any(tuple(shape) != w.shape for (shape, _), w in zip(got, want)):
        return math.inf, False
    diff, ok = 0.0, True
    for (shape, values), w in zip(got, want):
        g = np.array(values, dtype="float64").reshape(shape)
        with np.errstate(invalid="ignore"):
            diff = max(diff, float(np.nanmax(np.abs(g - w), initial=0.0)))
        ok = ok and bool(np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True))
    return diff, ok


def _runs(worker: Worker, program: RelaxProgram, source: str) -> dict[str, dict]:
    """Each input's run: its largest difference from the reference and whether it matches, or how it failed."""
    runs: dict[str, dict] = {}
    for label, x, conds in program.inputs():
        if worker.source != source:
            again = worker.compile(source)
            if again is None or "text" not in again:
                why = worker.died if again is None else again["error"]
                runs[label] = {"failed": f"could not compile again: {why}"}
                continue
        reply = worker.request({"x": x.ravel().tolist(), "shape": list(x.shape), "conds": list(conds)}, RUN_SECONDS)
        if reply is None or "error" in reply:
            runs[label] = {"failed": worker.died if reply is None else reply["error"]}
            worker.stop()
            continue
        diff, ok = _compare(reply["outputs"], program.reference(x, conds))
        runs[label] = {"max_abs_diff": diff, "matches": ok}
        if not ok:
            worker.stop()      # a wrong run may have written outside its tensors: start afresh
    return runs


def _plans(text: str) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "relax.txt"
        path.write_text(text)
        try:
            return read_relax(path)
        except TvmRelaxError as e:
            if "has no Relax function that allocates memory" in str(e):
                return []          # everything is a parameter or a view of one: nothing planned
            raise


def run_program(worker: Worker, program: RelaxProgram) -> Outcome | None:
    """Compile, read, check and run one program; None when TVM would not compile it."""
    source = program.source()
    reply = worker.compile(source)
    if reply is None or "text" not in reply:
        return None
    try:
        plans = _plans(reply["text"])
    except TvmRelaxError as e:
        raise RuntimeError(f"the TVM reader refused a module TVM {worker.versions.get('tvm')} printed (ours to fix, "
                           f"not a finding): {e}\nthe program:\n{source}") from e
    reports = [(p.label, check(p.plan)) for p in plans]
    claims = tuple(sorted({i for _, r in reports for i in r.violated()}))
    violations = tuple(f"[{label}] {v}" for label, r in reports for v in r.violations)
    runs = _runs(worker, program, source)
    diff = max((r.get("max_abs_diff", math.inf) for r in runs.values()), default=0.0)
    matches = all(r.get("matches", False) for r in runs.values())
    return Outcome(program, claims, violations, diff, matches,
                   {"relax.txt": reply["text"] + "\n", "runs.json": json.dumps(runs, indent=1, sort_keys=True)})


def campaign(python: str, *, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             max_ifs: int = 3, progress=lambda s: None) -> CampaignResult:
    """Draw up to ``examples`` programs, compiling with ``python``'s TVM; the first finding shrunk. The
    programs counted include the shrinking's; ``progress`` says when the first finding was drawn.
    ``max_ifs=0`` draws no ifs: a campaign that looks past apache/tvm#20191, open in every release."""
    worker = Worker(python)
    start, drawn = time.monotonic(), itertools.count(1)

    def run_one(program: RelaxProgram) -> Outcome | None:
        n, outcome = next(drawn), run_program(worker, program)
        if outcome is not None and outcome.kind in ("confirmed", "miss") and not found:
            found.append(n)
            progress(f"  program {n} is a {outcome.kind} finding ({time.monotonic() - start:.1f} s); shrinking it")
        return outcome

    found: list[int] = []
    try:
        result = run_campaign(relax_programs(max_steps=max_steps, max_ifs=max_ifs), run_one, examples=examples,
                              seed=seed, budget=budget, progress=progress)
    finally:
        worker.close()
    result.versions = worker.versions
    return result


def write_finding(outcome: Outcome, folder: str, versions: dict) -> str:
    return _write("tvm", outcome, folder, versions)
