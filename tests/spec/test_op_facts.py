"""The spec's own op and dtype tables (spec/op_facts.py, spec/dtypes.py) against impl's.

The two are written apart on purpose: the observer hands the spec op types and dtypes, and the spec
derives atomic outputs, continuous inputs, which nodes run a task and raw bytes from its own tables, so a
table changed in impl is judged instead of believed. These tests say where the two stand today: an entry
changed on one side only fails here (and, through the claims, in ``zcspec verify``)."""
from __future__ import annotations

import pytest

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Node
from zcspec.impl.platform import dtypes as impl_dtypes
from zcspec.spec import dtypes, op_facts

OP_TYPES = sorted(ops.OPS)


@pytest.mark.parametrize("op_type", OP_TYPES)
def test_atomic_and_continuous_facts_match_the_compilers_op_table(op_type):
    info = ops.OPS[op_type]
    assert op_facts.atomic(op_type) == info.atomic
    assert op_facts.continuous_input(op_type) == info.continuous_input


@pytest.mark.parametrize("op_type", OP_TYPES)
@pytest.mark.parametrize("view", [False, True])
def test_a_node_runs_a_task_exactly_when_the_compiler_gives_it_one(op_type, view):
    """``_view=True`` is the IR's no-task attribute (GE's ``_no_task``): a pass sets it on outer-axis splits."""
    node = Node("n", op_type, ("x",), ("y",), attrs=(("_view", True),) if view else ())
    assert op_facts.runs_task(op_type, dict(node.attrs)) == bool(ops.task_kinds(node))


@pytest.mark.parametrize("name", sorted(impl_dtypes.DTYPES))
def test_element_widths_match_the_dtype_table(name):
    for shape in ((), (3,), (5, 7), (0, 4)):
        assert dtypes.nbytes(shape, name) == impl_dtypes.nbytes(shape, name), (name, shape)


def test_aliases_and_unknown_dtypes():
    assert dtypes.nbytes((2, 3), "half") == 12
    with pytest.raises(dtypes.UnknownDTypeError, match="tensor 't'.*'string'"):
        dtypes.nbytes((1,), "string", tensor="t")


def test_every_fact_names_its_ge_source():
    assert set(op_facts.SOURCES) == {"atomic", "continuous_input", "no_task", "ge_ops"}
    assert all(".cc" in s for s in op_facts.SOURCES.values()) and ".cc" in dtypes.SOURCE
