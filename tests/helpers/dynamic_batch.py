"""The dynamic-batch model the runtime and checker tests share, and numpy's view of what it computes."""
from __future__ import annotations

import numpy as np

from zcspec.checks.zoo import dynamic_batch_graph
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions

X = np.random.default_rng(7).standard_normal((4, 64)).astype(np.float32)
CHAINS = {"b1": ["Relu", "Neg", "Sigmoid"], "b2": ["Abs", "Sqrt", "Neg"]}   # the zoo graph's branches


def expected(x: np.ndarray, label: str) -> np.ndarray:
    """What the zoo's dynamic_batch graph computes when branch ``label`` runs (numpy, not the kernels)."""
    branch = {"b1": lambda v: 1 / (1 + np.exp(np.maximum(v, 0))),   # Sigmoid(Neg(Relu))
              "b2": lambda v: -np.sqrt(np.abs(v))}[label]             # Neg(Sqrt(Abs))
    return branch(x.astype(np.float64)) + x


def model(strategy: str = "ge"):
    return build_model(dynamic_batch_graph(), CompileOptions(strategy=strategy))


def overlapping_across_branches(plan) -> list[tuple[str, str]]:
    """Pairs (b1 tensor, b2 tensor) whose feature-map ranges overlap in the plan."""
    fm = [t for t in plan.tensors if t.region == "feature_map" and t.batch]
    return [(a.name, b.name) for a in fm for b in fm if a.batch == "b1" and b.batch == "b2"
            and a.offset < b.offset + b.size and b.offset < a.offset + a.size]
