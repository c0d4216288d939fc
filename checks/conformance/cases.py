"""ONNX's own backend node tests, as cases for the ops of zcspec's op table.

``node_cases(ops=None)`` gives every node test case that ``onnx.backend.test.case.node``
builds (the same models and data as the ``data/node/*`` directories of an onnx source
tree) whose nodes are ALL of ops in ``zcspec.impl.compiler.ops.OPS`` in the default
domain, optionally only those using one of ``ops``. Each :class:`Case` carries the model,
its inputs and expected outputs (numpy arrays, in graph input / output order) and the
tolerance ONNX's backend runner compares with (rtol 1e-3, atol 1e-7 unless the case says).

``case_named(name)`` finds one case (an execution scenario names its node test so, checks/execution/
judge.py). ``KNOWN_FAILURES`` names the cases that still fail, each with why (the conformance tests
hold them as strict xfails; ``zcspec verify`` lists them and runs the rest).

The case list is built once per process: onnx's collector appends to a module-level list
on its first call and only filters by op type then, so it is called once, unfiltered.
"""
from __future__ import annotations

import functools
import warnings
from typing import Iterable

import attrs
import numpy as np
import onnx
from onnx import numpy_helper

from zcspec.impl.compiler import ops as op_table

DEFAULT_DOMAINS = ("", "ai.onnx")
KNOWN_FAILURES: dict[str, str] = {}


@attrs.frozen(eq=False)
class Case:
    """One node test: ``op_types`` are the op types of its graph (an ``_expanded`` case's graph is
    the function body of the op it is named after)."""

    name: str
    model: onnx.ModelProto
    inputs: tuple
    outputs: tuple
    rtol: float
    atol: float
    op_types: tuple[str, ...]

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.model.graph.input)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.model.graph.output)


def _array(value):
    """A test datum as numpy: TensorProtos (used for the exotic float types) are decoded, and
    sequences / optionals are left as they are (the import refuses them)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return value if isinstance(value, (list, tuple)) or value is None else np.asarray(value)


@functools.lru_cache(maxsize=1)
def _all_onnx_cases() -> tuple:
    from onnx.backend.test.case import node  # deferred: building ~1900 models takes seconds

    with warnings.catch_warnings():  # the generators overflow float8 casts on purpose
        warnings.simplefilter("ignore")
        return tuple(node.collect_testcases())


def _claimed(model: onnx.ModelProto) -> tuple[str, ...] | None:
    """The graph's op types when every node is a default-domain op of the op table, else None."""
    nodes = model.graph.node
    if not nodes or any(n.domain not in DEFAULT_DOMAINS or n.op_type not in op_table.OPS for n in nodes):
        return None
    return tuple(sorted({n.op_type for n in nodes}))


def all_cases() -> tuple[Case, ...]:
    """Every node test case of claimed ops, in onnx's order."""
    out = []
    for c in _all_onnx_cases():
        op_types = _claimed(c.model)
        if op_types is None or not c.data_sets:
            continue
        ins, outs = c.data_sets[0]
        out.append(Case(c.name, c.model, tuple(map(_array, ins)), tuple(map(_array, outs)),
                        float(c.rtol), float(c.atol), op_types))
    return tuple(out)


def node_cases(ops: Iterable[str] | None = None) -> tuple[Case, ...]:
    """The cases of claimed ops; with ``ops``, only those whose graph uses one of them."""
    cases = all_cases()
    if ops is None:
        return cases
    wanted = set(ops)
    return tuple(c for c in cases if wanted & set(c.op_types))


def case_named(name: str) -> Case:
    """The claimed-op case called ``name``; KeyError naming it when there is none."""
    found = _by_name().get(name)
    if found is None:
        raise KeyError(f"no ONNX node test case {name!r} of a claimed op (onnx {onnx.__version__})")
    return found


@functools.lru_cache(maxsize=1)
def _by_name() -> dict:
    return {c.name: c for c in all_cases()}
