"""Which Z3 proofs a checker case gets: the one entry point ``zcspec verify`` calls.

- a ``plan`` observation: the layout proof (:func:`zcspec.checks.proofs.z3_layout.prove_layout`),
  every tensor inside its region or user buffer, aligned, and no two live ones overlapping,
  for every placement of the regions' and buffers' bases;
- a ``model_file`` case of the file as compiled (no runtime edits, such as a mutation of its
  bytes) with the default strategy: the refresh proof
  (:func:`zcspec.checks.proofs.refresh.prove_refresh`), runtime v1's argument addresses right
  for every legal placement of the user's buffers, two calls deep. One strategy is enough, as
  for verify's executions: the runtime is the subject, and the model file's zero-copy table
  comes from the graph's views and I/O, not from the block layout.

Each result has ``status`` (proved / refuted / unknown), ``passed``, ``kind``, ``pair`` and
``reason`` (Z3's reason when unknown, the counterexample when refuted). ``claimed_proofs`` gives
each with its stable pseudo-claim id (``LAYOUT_CLAIM``, ``REFRESH_CLAIM``): the random campaign
(checks/campaign.py) names a refuted proof's counterexample by it, and ``zcspec replay`` re-runs
the proof it names (checks/replay.py).
"""
from __future__ import annotations

from zcspec.checks.proofs.refresh import prove_refresh
from zcspec.checks.proofs.z3_layout import prove_layout
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.observables import to_data

REFRESH_STRATEGY = CompileOptions().strategy

# The pseudo-claim ids of the proofs, by proof kind: a counterexample's ``invariant`` when a proof,
# not an invariant, refuted the case.
LAYOUT_CLAIM = "PROOF-LAYOUT"
REFRESH_CLAIM = "PROOF-V1-REFRESH"
CLAIMS = (LAYOUT_CLAIM, REFRESH_CLAIM)


def claims_of(scenario) -> tuple[str, ...]:
    """The proofs ``scenario`` gets, by claim id (before anything runs)."""
    if scenario.kind == "plan":
        return (LAYOUT_CLAIM,)
    if scenario.kind == "model_file" and not scenario.runtime and scenario.compile.strategy == REFRESH_STRATEGY:
        return (REFRESH_CLAIM,)
    return ()


def claimed_proofs(scenario, observations, claims: tuple[str, ...] | None = None) -> list[tuple[str, object]]:
    """(claim id, result) of every proof of ``scenario`` given its ``observations`` (only the
    ``claims`` named, if given)."""
    chosen = [c for c in claims_of(scenario) if claims is None or c in claims]
    out = []
    if LAYOUT_CLAIM in chosen:
        out += [(LAYOUT_CLAIM, prove_layout(to_data(o))) for o in observations]
    if REFRESH_CLAIM in chosen:
        out.append((REFRESH_CLAIM, prove_refresh(compile_stages(scenario.graph, scenario.compile).model)))
    return out


def case_proofs(scenario, observations) -> list:
    """The proofs of ``scenario`` (a ``checks.scenario.Scenario``) given its ``observations``."""
    return [p for _, p in claimed_proofs(scenario, observations)]
