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
``reason`` (Z3's reason when unknown, the counterexample when refuted).
"""
from __future__ import annotations

from zcspec.checks.proofs.refresh import prove_refresh
from zcspec.checks.proofs.z3_layout import prove_layout
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.observables import to_data

REFRESH_STRATEGY = CompileOptions().strategy


def case_proofs(scenario, observations) -> list:
    """The proofs of ``scenario`` (a ``checks.scenario.Scenario``) given its ``observations``."""
    if scenario.kind == "plan":
        return [prove_layout(to_data(o)) for o in observations]
    if scenario.kind == "model_file" and not scenario.runtime and scenario.compile.strategy == REFRESH_STRATEGY:
        return [prove_refresh(compile_stages(scenario.graph, scenario.compile).model)]
    return []
