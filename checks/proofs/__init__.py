"""Z3 proofs of what no fixed check can try, and an independent sweep checker.

- :func:`zcspec.checks.proofs.cases.case_proofs`: which proofs a verify case gets;
- :func:`zcspec.checks.proofs.refresh.prove_refresh`: runtime v1's argument addresses right
  for every legal placement of the user's buffers (its refresh run on symbolic addresses,
  :mod:`zcspec.checks.proofs.symbolic`), against the model file's tables;
- :func:`zcspec.checks.proofs.sweep.sweep_check`: every broken layout claim, by a lifetime sweep;
- :func:`zcspec.checks.proofs.z3_layout.prove_layout`: the same claims proved for every
  placement of the model regions and user buffers (symbolic base addresses);
- :func:`zcspec.checks.proofs.optimal.optimal_arena` / :func:`zcspec.checks.proofs.optimal.gap`:
  the exact optimum of small feature-map instances and a strategy's gap to it.

docs/proofs.md states the formulas and their assumptions.
"""
