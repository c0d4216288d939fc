"""GraphBuilder: write graphs in tests and examples without spelling out every desc.

    b = GraphBuilder("tiny")
    x = b.input("x", (1, 4))
    y = b.op("Relu", [x])                  # shape and dtype default to input 0's
    z = b.op("Add", [y, b.weight("w", np.ones((1, 4), np.float32))])
    b.output(z)
    graph = b.build()                      # validated

Names are generated (``relu_1``, ``relu_1:0``) unless given.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from zcspec.impl.compiler.ir import Graph, Node, TensorDesc, Weight
from zcspec.impl.compiler.validate import validate
from zcspec.impl.platform import dtypes

Shape = Sequence[int]


class GraphBuilder:
    def __init__(self, name: str = "graph"):
        self.name = name
        self._nodes: list[Node] = []
        self._tensors: dict[str, TensorDesc] = {}
        self._weights: list[Weight] = []
        self._count = 0

    def _fresh(self, stem: str) -> str:
        self._count += 1
        return f"{stem.lower()}_{self._count}"

    def desc(self, tensor: str) -> TensorDesc:
        return self._tensors[tensor]

    def input(self, name: str, shape: Shape, dtype: str = "float32", *, format: str = "ND") -> str:
        """A graph input: a Data node named ``name`` writing tensor ``name``."""
        index = sum(1 for n in self._nodes if n.op_type == "Data")
        self._tensors[name] = TensorDesc(name, tuple(shape), dtype, format)
        self._nodes.append(Node(name, "Data", (), (name,), {"index": index}))
        return name

    def weight(self, name: str, array: Any) -> str:
        arr = np.asarray(array)
        dtype = dtypes.of_numpy(arr.dtype)
        self._tensors[name] = TensorDesc(name, arr.shape, dtype)
        self._weights.append(Weight.from_array(name, arr, dtype))
        return name

    def op(
        self,
        op_type: str,
        inputs: Iterable[str],
        *,
        name: str | None = None,
        shape: Shape | None = None,
        dtype: str | None = None,
        outputs: Sequence[tuple[Shape, str]] | None = None,
        stream: int = 0,
        control_inputs: Sequence[str] = (),
        **attrs: Any,
    ) -> str | tuple[str, ...]:
        """Add a node; returns its output tensor name, or a tuple when ``outputs`` lists several.
        ``control_inputs``: names of nodes it must run after without reading their outputs."""
        inputs = tuple(inputs)
        name = name or self._fresh(op_type)
        first = self._tensors[inputs[0]] if inputs else None
        if outputs is None:
            out_shape = tuple(shape) if shape is not None else first.shape
            out_dtype = dtype or (first.dtype if first else "float32")
            specs = [(out_shape, out_dtype)]
        else:
            specs = [(tuple(s), d) for s, d in outputs]
        names = tuple(f"{name}:{i}" for i in range(len(specs)))
        for t, (s, d) in zip(names, specs):
            self._tensors[t] = TensorDesc(t, s, d)
        self._nodes.append(Node(name, op_type, inputs, names, attrs, stream, tuple(control_inputs)))
        return names if outputs is not None else names[0]

    def output(self, *tensors: str, name: str = "NetOutput") -> None:
        self._nodes.append(Node(name, "NetOutput", tensors, ()))

    def build(self, *, check: bool = True) -> Graph:
        graph = Graph(self.name, self._nodes, self._tensors.values(), self._weights)
        return validate(graph) if check else graph
