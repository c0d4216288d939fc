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

import numpy as np

from zcspec.checks.foreign import xla_dump
from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.campaign_core import write_finding as _write
from zcspec.checks.foreign.jax_programs import JaxProgram, jax_programs
from zcspec.spec.check import check

RTOL, ATOL = 1e-3, 1e-4


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
    with np.errstate(invalid="ignore"):
        diff = max((float(np.nanmax(np.abs(g.astype(np.float64) - w.astype(np.float64)), initial=0.0))
                    for g, w in zip(got, want) if g.shape == w.shape), default=0.0)
    matches = len(got) == len(want) and all(g.shape == w.shape and np.allclose(g, w, rtol=RTOL, atol=ATOL,
                                                                                 equal_nan=True)
                                            for g, w in zip(got, want))
    return Outcome(program, tuple(report.violated()), tuple(str(v) for v in report.violations), diff, matches,
                   artefact)


def campaign(*, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 5,
             progress=lambda s: None) -> CampaignResult:
    """Draw up to ``examples`` programs (stop drawing after ``budget`` seconds); the first finding shrunk."""
    import jax
    import jaxlib

    result = run_campaign(jax_programs(max_steps=max_steps), run_program, examples=examples, seed=seed,
                          budget=budget, progress=progress)
    result.versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
    return result


def write_finding(outcome: Outcome, folder: str, versions: dict | None = None) -> str:
    if versions is None:
        import jax
        import jaxlib
        versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}
    return _write("xla", outcome, folder, versions)
