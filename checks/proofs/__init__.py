"""Layout proofs: an independent sweep checker and a Z3 prover over the plan JSON contract.

- :func:`zcspec.checks.proofs.sweep.sweep_check`: every broken layout claim, by a lifetime sweep;
- :func:`zcspec.checks.proofs.z3_layout.prove_layout`: the same claims proved for every
  placement of the model regions and user buffers (symbolic base addresses);
- :func:`zcspec.checks.proofs.optimal.optimal_arena` / :func:`zcspec.checks.proofs.optimal.gap`:
  the exact optimum of small feature-map instances and a strategy's gap to it.

docs/proofs.md states the formula and its assumptions.
"""
