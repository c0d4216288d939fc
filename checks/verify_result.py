"""What ``zcspec verify`` reports: its result (findings, proofs, errors, each phase's counts, the tally) and
how a phase records into it (an error of a kind, an exception of the code under test, the plan rows a
violation names). checks/verify.py runs the phases; the CLI, the report page and the mutation benchmark
read the result."""
from __future__ import annotations

import attrs

from zcspec.checks.campaign import Tally
from zcspec.checks.verify_artefacts import ArtefactWriter
from zcspec.impl.platform.errors import BadInput

# The non-vacuity floor: every invariant must be exercised by at least this many distinct cases.
MIN_DISTINCT = 3


@attrs.define
class Finding:
    case: str
    violation: object
    rows: list = attrs.Factory(list)


@attrs.define
class NodeTestResult:
    """ONNX's node tests in this run: ``run`` cases executed, ``refused`` (name, why) at import as
    unsupported, ``failed`` case labels (a finding, a crash, a failed valid call or an unjudged output),
    ``known`` (name, why) of the known failures left out (checks/conformance/cases.py)."""

    run: int = 0
    refused: list = attrs.Factory(list)
    failed: list = attrs.Factory(list)
    known: list = attrs.Factory(list)


@attrs.define
class SweepResult:
    """The dtype sweep in this run (checks/dtype_sweep_cases.py): ``run`` models imported and run, ``refused``
    labels of those refused at import naming the node and the type, ``unjudged`` labels of those run whose
    outputs no oracle judged, ``failed`` labels, ``known`` (label, why) of the recorded failures that
    still fail (``KNOWN``: not failures of the run)."""

    run: int = 0
    refused: list = attrs.Factory(list)
    unjudged: list = attrs.Factory(list)
    failed: list = attrs.Factory(list)
    known: list = attrs.Factory(list)


@attrs.define
class VerifyResult:
    tally: Tally = attrs.Factory(Tally)
    findings: list = attrs.Factory(list)
    proofs: list = attrs.Factory(list)          # (case, ProofResult)
    corpus: list = attrs.Factory(list)          # ReplayResult
    counterexample: object = None               # the campaign's shrunk failure
    errors: list = attrs.Factory(list)          # (case, message): a crash, a refusal or a failed check
    error_kinds: list = attrs.Factory(list)     # the kind of each of ``errors`` (ERROR_KINDS), in its order
    seconds: float = 0.0
    stopped: str = ""                           # why a fail-fast run stopped early
    timings: list = attrs.Factory(list)         # (phase, seconds) of each phase that ran to its end
    node_tests: NodeTestResult | None = None    # None: not run
    packing_cases: tuple[int, int] = (0, 0)     # (run, failed) of checks/packing_cases.py
    acl_refusals: tuple[int, int] = (0, 0)      # (run, failed) of checks/acl_refusal_cases.py
    ge_cases: tuple[int, int] = (0, 0)          # (run, failed) of GE's unit-test cases (checks/cases/ge)
    shipped_cases: tuple[int, int] = (0, 0)     # (run, failed) of checks/shipped_pytorch_cases.py
    dtype_sweep: SweepResult | None = None      # None: not run
    foreign: list = attrs.Factory(list)         # (case label, expect, problems) of checks/foreign/programs.py
    artefacts: ArtefactWriter = attrs.Factory(ArtefactWriter)   # where each case was written (--artefacts)

    def unexercised(self, ids) -> list[str]:
        return [i for i in ids if not self.tally.exercised[i]]

    def below_floor(self, ids, floor: int = MIN_DISTINCT) -> list[str]:
        """Invariants exercised by fewer than ``floor`` distinct cases (never exercised included)."""
        return [i for i in ids if self.tally.distinct_count(i) < floor]

    @property
    def failed_calls(self) -> list:
        """Notes of calls that failed although their buffers were valid."""
        return [n for n in self.tally.notes if n.failed]

    @property
    def unjudged(self) -> list:
        """Notes of outputs no oracle judged."""
        return [n for n in self.tally.notes if not n.failed]

    def failing(self) -> bool:
        """Whether anything already makes the run fail (what ``fail_fast`` stops on)."""
        return bool(self.findings or self.errors or self.counterexample is not None or self.failed_calls)

    def ok(self, ids) -> bool:
        return (not self.failing() and all(p.passed for _, p in self.proofs)
                and all(r.as_expected for r in self.corpus) and not self.below_floor(ids))


# What an error of the run is: the code under test crashed (an exception other than its own refusal),
# refused its own artefact or a valid input (impl's BadInput), or a check of verify other than a claim
# found a problem (a bad call not refused as the C API refuses it, a packing answer the facts contradict,
# a front-end refusal other than the expected one, an import other than the record's, an output left
# unjudged). benchmarks/mutation_score.py attributes each kill by it (--artefacts' verdict.json).
ERROR_KINDS = ("crash", "refusal", "check")


def record_error(result: "VerifyResult", case: str, message: str, kind: str) -> None:
    """Record one error of the run, of ``kind`` (ERROR_KINDS)."""
    if kind not in ERROR_KINDS:
        raise ValueError(f"error kind {kind!r} is not one of {ERROR_KINDS}")
    result.errors.append((case, message))
    result.error_kinds.append(kind)


def exception_kind(e: BaseException) -> str:
    """The error kind of an exception of the code under test: impl's own refusal (its BadInput), else a crash."""
    return "refusal" if isinstance(e, BadInput) and type(e).__module__.startswith("zcspec.impl.") else "crash"


def record_raised(result: "VerifyResult", case: str, e: Exception, prefix: str = "") -> None:
    """An exception of the code under test: impl's own refusal (its BadInput), else a crash."""
    record_error(result, case, f"{prefix}{type(e).__name__}: {e}", exception_kind(e))


def violation_rows(observation, violation) -> list:
    """Plan rows of the tensors a violation names (for the report)."""
    tensor = getattr(observation, "tensor", None)
    if not isinstance(tensor, dict):
        return []
    text = violation.culprit + " " + str(violation.values)
    return [t for name, t in tensor.items() if f"'{name}'" in text]
