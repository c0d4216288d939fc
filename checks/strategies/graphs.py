"""Hypothesis strategies for executable graphs with consistent shapes.

``graphs()`` draws random valid DAGs over the kernel library: elementwise and
reduction ops, views (no task, alias of their input), continuous-input ops
(HCCL collectives, PhonyConcat), atomic-clean ops (ReduceSum accumulates into
its output), in-place ops (``_reuse_input``, or ``_inplace_ability``'s optional pair), several inputs and outputs, an
output that also feeds other nodes, and a graph input passed straight to an
output; collectives are HcomAllReduce (one or two inputs; fused, ``continuous_output``: two inputs whose
outputs sit in one block, which GE's conflict optimizer copies where a graph output or another continuous
input meets them) and HcomBroadcast. Every tensor is float32; attributes use the opset-9 attribute forms
(Slice/Split/ReduceSum/Squeeze parameters are attributes, Reshape's target is
an int64 weight), as the ONNX front end keeps them.

Draws shrink toward fewer nodes, smaller shapes and the first op families.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.ir import Graph

FAMILIES = ("unary", "binary", "sum", "concat", "matmul", "transpose", "softmax", "reduce", "reshape",
            "flatten", "identity", "unsqueeze", "split", "slice", "allreduce", "phony_concat", "inplace",
            "broadcast", "fused_allreduce")
UNARY = ("Relu", "Neg", "Abs", "Sigmoid", "Tanh")
BINARY = ("Add", "Sub", "Mul", "Max", "Min")


def _validate_bounds(**bounds) -> None:
    for name, (lo, hi) in bounds.items():
        if lo < 0 or hi < lo:
            raise ValueError(f"graphs(): {name} bounds ({lo}, {hi}) must satisfy 0 <= min <= max")


class _Draft:
    """The graph being drawn: a builder plus what each tensor's shape is and who reads it."""

    def __init__(self, draw, name: str):
        self.draw, self.b = draw, GraphBuilder(name)
        self.pool: list[str] = []  # tensors later nodes may read
        self.readers: dict[str, int] = {}
        self.weights = 0

    def shape(self, t: str) -> tuple[int, ...]:
        return self.b.desc(t).shape

    def pick(self, pred=lambda s: True) -> str | None:
        choices = [t for t in self.pool if pred(self.shape(t))]
        return self.draw(st.sampled_from(choices)) if choices else None

    def weight(self, shape) -> str:
        self.weights += 1
        values = self.draw(st.lists(st.sampled_from([0.5, -1.0, 0.25, 2.0]), min_size=1, max_size=1))[0]
        arr = np.full(shape, values, np.float32) + np.arange(math.prod(shape), dtype=np.float32).reshape(shape) / 16
        return self.b.weight(f"w{self.weights}", arr)

    def add(self, op, inputs, **kw) -> str | tuple[str, ...]:
        for t in inputs:
            self.readers[t] = self.readers.get(t, 0) + 1
        out = self.b.op(op, inputs, **kw)
        self.pool.extend(out if isinstance(out, tuple) else (out,))
        return out


def _same_shape_partner(d: _Draft, x: str) -> str:
    other = d.pick(lambda s: s == d.shape(x))
    return other if other is not None and d.draw(st.booleans()) else d.weight(d.shape(x))


def _distinct_activation(d: _Draft, x: str, fits) -> str | None:
    """Another pool tensor (never a weight) satisfying ``fits``: one tensor cannot sit twice
    in one contiguous group, and weights (fixed memory) cannot join one."""
    choices = [t for t in d.pool if t != x and fits(d.shape(t))]
    return d.draw(st.sampled_from(choices)) if choices else None


def _step(d: _Draft, family: str) -> None:  # noqa: C901 - a table of small cases reads best inline
    draw = d.draw
    x = d.pick()
    s = d.shape(x)
    if family == "unary":
        d.add(draw(st.sampled_from(UNARY)), [x])
    elif family == "binary":
        d.add(draw(st.sampled_from(BINARY)), [x, _same_shape_partner(d, x)])
    elif family == "sum":
        d.add("Sum", [x, _same_shape_partner(d, x), _same_shape_partner(d, x)])
    elif family == "concat":
        axis = draw(st.integers(0, len(s) - 1))
        y = d.pick(lambda t: len(t) == len(s) and all(a == b for i, (a, b) in enumerate(zip(t, s)) if i != axis))
        shape = list(s)
        shape[axis] += d.shape(y)[axis]
        d.add("Concat", [x, y], shape=shape, axis=axis)
    elif family == "matmul":
        x = d.pick(lambda t: len(t) == 2) or d.add("Flatten", [x], shape=(s[0], math.prod(s[1:])), axis=1)
        m, k = d.shape(x)
        n = draw(st.integers(1, 4))
        d.add("MatMul", [x, d.weight((k, n))], shape=(m, n))
    elif family == "transpose":
        perm = draw(st.permutations(range(len(s))))
        d.add("Transpose", [x], shape=[s[p] for p in perm], perm=tuple(perm))
    elif family == "softmax":
        d.add("Softmax", [x], axis=len(s) - 1)
    elif family == "reduce":
        axis = draw(st.integers(0, len(s) - 1))
        d.add("ReduceSum", [x], shape=[1 if i == axis else v for i, v in enumerate(s)], axes=(axis,), keepdims=1)
    elif family == "reshape":
        target = (math.prod(s),) if len(s) > 1 else (1, s[0])
        shape_w = d.b.weight(f"shape{len(d.pool)}", np.array(target, np.int64))
        d.add("Reshape", [x, shape_w], shape=target)
    elif family == "flatten":
        if len(s) > 1:
            d.add("Flatten", [x], shape=(s[0], math.prod(s[1:])), axis=1)
        else:
            d.add("Flatten", [x], shape=(1, s[0]), axis=0)
    elif family == "identity":
        d.add("Identity", [x])
    elif family == "unsqueeze":
        if len(s) < 3:
            d.add("Unsqueeze", [x], shape=(1, *s), axes=(0,))
        else:
            d.add("Identity", [x])
    elif family == "split":
        if s[0] < 2:
            d.add("Relu", [x])
            return
        first = draw(st.integers(1, s[0] - 1))
        parts = (first, s[0] - first)
        d.add("Split", [x], outputs=[((p, *s[1:]), "float32") for p in parts], axis=0, split=parts)
    elif family == "slice":
        axis = draw(st.integers(0, len(s) - 1))
        start = draw(st.integers(0, s[axis] - 1))
        end = draw(st.integers(start + 1, s[axis]))
        shape = [end - start if i == axis else v for i, v in enumerate(s)]
        d.add("Slice", [x], shape=shape, starts=(start,), ends=(end,), axes=(axis,))
    elif family == "allreduce":
        y = _distinct_activation(d, x, lambda t: t == s) if draw(st.booleans()) else None
        ins = [x] if y is None else [x, y]
        d.add("HcomAllReduce", ins, outputs=[(d.shape(t), "float32") for t in ins], reduction="sum")
    elif family == "fused_allreduce":
        y = _distinct_activation(d, x, lambda t: t == s)
        if y is None:
            d.add("Relu", [x])
            return
        d.add("HcomAllReduce", [x, y], outputs=[(s, "float32"), (s, "float32")], reduction="sum",
              continuous_output=True)
    elif family == "broadcast":
        # A one-input, one-output collective: its output is no continuous group, so as a model output
        # only the HCCL zero-copy flags decide whether it is copied (runtime v1's HCCL rule).
        d.add("HcomBroadcast", [x], reduction="sum")
    elif family == "phony_concat":
        y = _distinct_activation(d, x, lambda t: t[1:] == s[1:])
        if y is None:
            d.add("Relu", [x])
            return
        d.add("PhonyConcat", [x, y], shape=(s[0] + d.shape(y)[0], *s[1:]), axis=0)
    elif family == "inplace":
        # In-place is only sound when this node is the input's last reader and the input
        # is an intermediate (not a graph input, weight or output): it overwrites it.
        owner = d.b._nodes[-1]
        target = owner.outputs[0] if owner.op_type not in ("Data", "Split", "HcomAllReduce") and owner.outputs else None
        if target is None or d.readers.get(target) or d.b.desc(target) is None:
            d.add("Relu", [x])
            return
        # a ref (GE trusts it) or an optional in-place pair (ProcessInplace keeps it on its conditions)
        flag = draw(st.sampled_from(({"_reuse_input": True}, {"_inplace_ability": (0, 0)})))
        d.add(draw(st.sampled_from(UNARY)), [target], **flag)
        d.pool.remove(target)
    else:  # pragma: no cover - FAMILIES and this table are kept in step by a test
        raise ValueError(f"unknown op family {family!r}")


def graphs(
    *,
    min_nodes: int = 1,
    max_nodes: int = 8,
    min_inputs: int = 1,
    max_inputs: int = 3,
    max_dim: int = 4,
    families: tuple[str, ...] = FAMILIES,
) -> Graph:
    """A valid, executable graph of ``min_nodes``..``max_nodes`` compute/view nodes.

    Arguments are checked eagerly (a bad bound fails here, not at the first draw).
    """
    _validate_bounds(nodes=(min_nodes, max_nodes), inputs=(min_inputs, max_inputs), dim=(1, max_dim))
    if unknown := set(families) - set(FAMILIES):
        raise ValueError(f"graphs(): unknown families {sorted(unknown)}; known: {FAMILIES}")
    return _graphs(min_nodes, max_nodes, min_inputs, max_inputs, max_dim, tuple(families))


@st.composite
def _graphs(draw, min_nodes, max_nodes, min_inputs, max_inputs, max_dim, families) -> Graph:
    d = _Draft(draw, "random")
    dims = st.integers(1, max_dim)
    for i in range(draw(st.integers(max(min_inputs, 1), max(max_inputs, 1)))):
        d.pool.append(d.b.input(f"in{i}", draw(st.lists(dims, min_size=1, max_size=3))))
    for _ in range(draw(st.integers(min_nodes, max_nodes))):
        _step(d, draw(st.sampled_from(families)))
    unread = [t for t in d.pool if not d.readers.get(t)]
    extra = draw(st.lists(st.sampled_from(d.pool), max_size=2))  # outputs that also feed other nodes
    d.b.output(*dict.fromkeys(unread + extra))
    return d.b.build()
