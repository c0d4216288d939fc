"""The XLA campaign: Hypothesis draws jax programs, XLA compiles them, the spec checks the plans.

Each drawn program (checks/foreign/jax_programs.py) is compiled by ``jax.jit`` on the CPU with XLA's
dump options, its buffer assignment read back (checks/foreign/xla_dump.py) and checked with every
claim that applies; its compiled result is compared with eager execution (``jax.disable_jit``),
the oracle. A program is a finding when its plan breaks a claim, or when its result differs from
eager while every claim holds (a bug the spec missed). Hypothesis shrinks the first finding to a
smallest program; it is written as a file that ``zcspec replay`` re-checks without jax
(checks/foreign/finding.py). Needs the ``xla`` extra (jax).
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import attrs
import numpy as np
from hypothesis import HealthCheck, given, seed as hseed, settings

from zcspec.checks.foreign import xla_dump
from zcspec.checks.foreign.finding import ForeignFinding
from zcspec.checks.foreign.jax_programs import JaxProgram, jax_programs
from zcspec.spec.check import check

RTOL, ATOL = 1e-3, 1e-4


@attrs.frozen
class Outcome:
    program: JaxProgram
    claims: tuple[str, ...]
    violations: tuple[str, ...]
    max_abs_diff: float
    matches: bool
    artefact: dict

    @property
    def kind(self) -> str:
        if self.claims:
            return "hazard" if self.matches else "confirmed"
        return "clean" if self.matches else "miss"


def run_program(program: JaxProgram) -> Outcome:
    """Compile, dump, check and compare one program (see the module doc)."""
    import jax   # the xla extra: imported only by the campaign that needs it

    namespace: dict = {}
    exec(compile(program.source(), "<jax program>", "exec"), namespace)
    f, args = namespace["f"], namespace["args"]
    with tempfile.TemporaryDirectory() as tmp:
        compiled = jax.jit(f).lower(*args).compile(
            compiler_options={"xla_dump_to": tmp, "xla_dump_hlo_as_text": True})
        got = [np.asarray(a) for a in jax.tree.leaves(compiled(*args))]
        with jax.disable_jit():
            want = [np.asarray(a) for a in jax.tree.leaves(f(*args))]
        module = next(m for m in xla_dump.find_modules(tmp) if ".jit_f." in m.name)
        artefact = {s: p.read_text() for s, p in zip(xla_dump.SUFFIXES, module.files)}
        plan = xla_dump.read_module(module)
    report = check(plan)
    diff = max((float(np.nanmax(np.abs(g.astype(np.float64) - w.astype(np.float64)), initial=0.0))
                for g, w in zip(got, want) if g.shape == w.shape), default=0.0)
    matches = len(got) == len(want) and all(g.shape == w.shape and np.allclose(g, w, rtol=RTOL, atol=ATOL,
                                                                                 equal_nan=True)
                                            for g, w in zip(got, want))
    return Outcome(program, tuple(report.violated()), tuple(str(v) for v in report.violations), diff, matches,
                   artefact)


class _Found(Exception):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        super().__init__(f"claims {outcome.claims}, matches eager: {outcome.matches}")


@attrs.define
class CampaignResult:
    programs: int = 0
    seconds: float = 0.0
    finding: Outcome | None = None     # the first confirmed bug or miss, shrunk
    clean: int = 0
    hazards: int = 0
    first_hazard: Outcome | None = None


def campaign(*, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 5,
             progress=lambda s: None) -> CampaignResult:
    """Draw up to ``examples`` programs (stop drawing after ``budget`` seconds); the first finding shrunk."""
    result = CampaignResult()
    start = time.monotonic()

    @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(jax_programs(max_steps=max_steps))
    def probe(program):
        if time.monotonic() - start > budget and result.finding is None:
            return
        outcome = run_program(program)
        result.programs += 1
        if result.programs % 10 == 0:
            progress(f"  {result.programs} programs, {time.monotonic() - start:.0f} s, {result.hazards} hazard(s)")
        if outcome.kind in ("confirmed", "miss"):
            result.finding = outcome
            raise _Found(outcome)
        if outcome.kind == "hazard":
            result.hazards += 1
            result.first_hazard = result.first_hazard or outcome
        else:
            result.clean += 1

    try:
        probe()
    except _Found as found:     # Hypothesis re-raises the shrunk program's
        result.finding = found.outcome
    result.seconds = time.monotonic() - start
    return result


def as_finding(outcome: Outcome) -> ForeignFinding:
    import jax
    import jaxlib

    return ForeignFinding("xla", outcome.kind, outcome.program.to_data(), outcome.program.source(), outcome.claims,
                          outcome.violations, outcome.max_abs_diff, outcome.artefact,
                          {"jax": jax.__version__, "jaxlib": jaxlib.__version__})


def write_finding(outcome: Outcome, folder: str) -> str:
    Path(folder).mkdir(parents=True, exist_ok=True)
    claims = "-".join(c.lower() for c in outcome.claims)
    path = str(Path(folder) / f"xla-{outcome.kind}{'-' + claims if claims else ''}-{len(outcome.program.steps)}-steps.json")
    as_finding(outcome).save(path)
    return path
