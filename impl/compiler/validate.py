"""Graph validation: every rule the IR relies on, each failure naming its culprit.

``validate(graph)`` returns the graph unchanged when it is well formed and
raises the first ``GraphError`` found otherwise. Checks run in an order where
each relies on the previous ones (names before references, references before
cycles).
"""
from __future__ import annotations

from collections import Counter

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.errors import (
    DuplicateNameError,
    GraphError,
    MissingTensorError,
    ShapeError,
    UnsupportedOpError,
)
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.errors import SizeOverflowError, UnknownDTypeError


def validate(graph: Graph) -> Graph:
    _names_unique(graph)
    _ops_supported(graph)
    _io_nodes(graph)
    _tensors_resolved(graph)
    _descs_valid(graph)
    _weights_consistent(graph)
    _merges_valid(graph)
    _reuse_inputs_valid(graph)
    _continuous_outputs_valid(graph)
    _separate_clean_valid(graph)
    _control_inputs_valid(graph)
    execution_order(graph)  # raises CycleError
    return graph


def _first_duplicate(names) -> str | None:
    dup = [n for n, c in Counter(names).items() if c > 1]
    return dup[0] if dup else None


def _names_unique(graph: Graph) -> None:
    if (name := _first_duplicate(n.name for n in graph.nodes)) is not None:
        raise DuplicateNameError("node", name, node=name)
    if (name := _first_duplicate(t.name for t in graph.tensors)) is not None:
        raise DuplicateNameError("tensor", name)
    if (name := _first_duplicate(w.name for w in graph.weights)) is not None:
        raise DuplicateNameError("weight", name)
    written = [t for n in graph.nodes for t in n.outputs] + [w.name for w in graph.weights]
    if (name := _first_duplicate(written)) is not None:
        writers = [n.name for n in graph.nodes if name in n.outputs]
        raise GraphError(
            f"tensor {name!r} is written more than once (by {', '.join(map(repr, writers)) or 'a weight'}"
            f"{' and a weight' if name in graph.weight and writers else ''})",
            tensor=name, node=writers[0] if writers else "",
        )


def _ops_supported(graph: Graph) -> None:
    for n in graph.nodes:
        info = ops.info(n.op_type)
        if info is None:
            raise UnsupportedOpError(n.op_type, node=n.name)
        for what, count, (lo, hi) in (("inputs", len(n.inputs), info.inputs), ("outputs", len(n.outputs), info.outputs)):
            if count < lo or (hi is not None and count > hi):
                want = f"{lo}" if lo == hi else f"{lo}..{'' if hi is None else hi}"
                raise GraphError(f"node {n.name!r} ({n.op_type}) has {count} {what}, expects {want}", node=n.name)


def _io_nodes(graph: Graph) -> None:
    outs = [n for n in graph.nodes if n.op_type == "NetOutput"]
    if len(outs) != 1:
        raise GraphError(f"graph {graph.name!r} needs exactly one NetOutput node, has {len(outs)}")
    indexes = [n.attr("index") for n in graph.data_nodes]
    if sorted(i for i in indexes if isinstance(i, int)) != list(range(len(indexes))):
        raise GraphError(f"Data node indexes must be 0..{len(indexes) - 1}, got {indexes!r}")


def _control_inputs_valid(graph: Graph) -> None:
    """Each control input names another node of the graph, once."""
    for n in graph.nodes:
        for src in n.control_inputs:
            if src not in graph.node:
                raise GraphError(f"node {n.name!r} has a control input from {src!r}, which is not a node of the graph",
                                 node=n.name)
            if src == n.name:
                raise GraphError(f"node {n.name!r} has a control input from itself", node=n.name)
        if (dup := _first_duplicate(n.control_inputs)) is not None:
            raise GraphError(f"node {n.name!r} lists control input {dup!r} twice", node=n.name)


def _tensors_resolved(graph: Graph) -> None:
    produced = set(graph.producer) | set(graph.weight)
    for n in graph.nodes:
        for t in n.inputs:
            if t not in produced:
                raise MissingTensorError(t, node=n.name)
        for t in n.inputs + n.outputs:
            if t not in graph.desc:
                raise GraphError(f"node {n.name!r} uses tensor {t!r}, which has no TensorDesc", node=n.name, tensor=t)
    for w in graph.weights:
        if w.name not in graph.desc:
            raise GraphError(f"weight {w.name!r} has no TensorDesc", tensor=w.name)


def _descs_valid(graph: Graph) -> None:
    for t in graph.tensors:
        try:
            dtypes.get(t.dtype)
        except UnknownDTypeError:
            raise UnknownDTypeError(t.dtype, tensor=t.name) from None
        for dim in t.shape:
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise ShapeError(t.name, t.shape, f"dimension {dim!r} is dynamic; every dimension must be a fixed integer")
            if dim < 0:  # 0 is fine: an empty tensor (GE gives it the size padding: CalibrateTensorSize)
                raise ShapeError(t.name, t.shape, f"dimension {dim} is negative")
        try:
            nbytes = t.nbytes
        except SizeOverflowError as e:
            e.tensor = e.tensor or t.name
            raise
        if t.size is not None:
            _set_size_valid(t, nbytes)


def no_set_sizes(graph: Graph) -> Graph:
    """``graph`` unchanged if no tensor has a set size, else a GraphError naming the first that has.

    A set size is a planning fact (``zcspec plan``, the spec's claims on a plan): the model file records
    no set sizes, and its loader sizes every tensor a task or the I/O table accesses from the bytes
    accessed (model_file/consistency.py), as the runtimes size user buffers from the I/O table
    (docs/runtime-v1.md), so a file built from such a graph would be refused at load."""
    for t in graph.tensors:
        if t.size is not None:
            raise GraphError(f"tensor {t.name!r} has set size {t.size} bytes: a model file records no set sizes "
                             f"(they are for planning only); leave \"size\" out to compile", tensor=t.name)
    return graph


def _set_size_valid(t, nbytes: int) -> None:
    """A set size (GE's TensorUtils::SetSize) is a whole number of bytes, at least one, that holds the
    shape's raw bytes: the planner lays the shape's bytes out inside it (a NoPadding piece by the
    shape, its block by the set size), so a smaller one would hand the tensor less than it holds."""
    size = t.size
    if not isinstance(size, int) or isinstance(size, bool):
        raise GraphError(f"tensor {t.name!r} has set size {size!r}: it must be an integer number of bytes",
                         tensor=t.name)
    if size < 1:
        raise GraphError(f"tensor {t.name!r} has set size {size} bytes: it must be at least 1", tensor=t.name)
    if size < nbytes:
        raise GraphError(f"tensor {t.name!r} has set size {size} bytes, less than the {nbytes} raw bytes of its "
                         f"shape {t.shape}x{t.dtype}", tensor=t.name)


def _weights_consistent(graph: Graph) -> None:
    for w in graph.weights:
        desc = graph.desc[w.name]
        item = dtypes.get(desc.dtype).bits
        want = (item + 7) // 8 if w.splat else desc.nbytes
        if len(w.data) != want:
            raise GraphError(
                f"weight {w.name!r} holds {len(w.data)} bytes, its desc {desc.shape}x{desc.dtype} needs {want}"
                + (" (one element, splat)" if w.splat else ""),
                tensor=w.name,
            )


def _reuse_inputs_valid(graph: Graph) -> None:
    """``_reuse_input`` is True (input 0) or the index of one of the node's inputs; ``_inplace_ability``
    is (output, input) index pairs, flattened (ops.py ``inplace``)."""
    for n in graph.nodes:
        reuse = n.attr("_reuse_input", False)
        if reuse is False or reuse is True or reuse is None:
            continue
        if not isinstance(reuse, int) or not 0 <= reuse < len(n.inputs):
            raise GraphError(f"node {n.name!r} has _reuse_input={reuse!r}: it must be True (input 0) or the index "
                             f"of one of its {len(n.inputs)} inputs", node=n.name)
    for n in graph.nodes:
        flat = n.attr("_inplace_ability", ())
        if not (isinstance(flat, tuple) and len(flat) % 2 == 0
                and all(isinstance(k, int) and not isinstance(k, bool) for k in flat)):
            raise GraphError(f"node {n.name!r} has _inplace_ability={flat!r}: it must be (output, input) index "
                             f"pairs, flattened into one tuple of ints (a pair naming no output or input is "
                             f"ignored, as GE ignores it)", node=n.name)


def _continuous_outputs_valid(graph: Graph) -> None:
    """``continuous_output`` (GE's ATTR_NAME_CONTINUOUS_OUTPUT) is a bool."""
    for n in graph.nodes:
        flag = n.attr("continuous_output", False)
        if not isinstance(flag, bool):
            raise GraphError(f"node {n.name!r} has continuous_output={flag!r}: it must be True or False", node=n.name)


def _separate_clean_valid(graph: Graph) -> None:
    """``need_gentask_atomic`` is a bool and ``atomic_input_index`` (GE's ATOMIC_ATTR_INPUT_INDEX) a tuple of
    ints: together they make a continuous-input node clean its inputs separately (rules.separate_clean)."""
    for n in graph.nodes:
        flag, index = n.attr("need_gentask_atomic", False), n.attr("atomic_input_index", ())
        if not isinstance(flag, bool):
            raise GraphError(f"node {n.name!r} has need_gentask_atomic={flag!r}: it must be True or False", node=n.name)
        if not (isinstance(index, tuple) and all(isinstance(k, int) and not isinstance(k, bool) for k in index)):
            raise GraphError(f"node {n.name!r} has atomic_input_index={index!r}: it must be a tuple of input "
                             "indexes (GE's ATOMIC_ATTR_INPUT_INDEX, (-1,) for all inputs)", node=n.name)


def _merges_valid(graph: Graph) -> None:
    """A Merge joins dynamic-batch branches (ops.py): ``labels`` names each input's branch, distinct and
    non-empty, and is the ``_batch_label`` of that input's producer; every input is shaped like the output;
    the Merge itself runs in every execution, so it has no label of its own."""
    for n in graph.nodes:
        if n.op_type != "Merge":
            continue
        labels = n.attr("labels")
        if (not isinstance(labels, tuple) or len(labels) != len(n.inputs) or len(set(labels)) != len(labels)
                or not all(isinstance(x, str) and x for x in labels)):
            raise GraphError(f"Merge {n.name!r} needs labels=, one distinct non-empty branch label per input "
                             f"({len(n.inputs)}), got {labels!r}", node=n.name)
        if rules.batch_label(n):
            raise GraphError(f"Merge {n.name!r} has _batch_label={rules.batch_label(n)!r}; a Merge runs in every "
                             "execution and takes no branch label", node=n.name)
        out = graph.desc[n.outputs[0]]
        for t, label in zip(n.inputs, labels):
            d, producer = graph.desc[t], graph.node.get(graph.producer.get(t, ""))
            got = rules.batch_label(producer) if producer is not None else ""
            if (d.shape, d.dtype) != (out.shape, out.dtype):
                raise ShapeError(t, d.shape, f"Merge {n.name!r} input is {d.shape}x{d.dtype}, its output "
                                             f"{out.shape}x{out.dtype}; every branch must give the same tensor")
            if got != label:
                raise GraphError(f"Merge {n.name!r} input {t!r} is listed for branch {label!r}, but it is "
                                 f"produced in branch {got!r} (the _batch_label of its producer)",
                                 node=n.name, tensor=t)
