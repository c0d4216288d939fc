"""Errors of the ONNX front end, each a ``GraphError`` so the command line exits with 2.

They add what the compiler's generic errors (``zcspec.impl.compiler.errors``) cannot
say: a file that is not an ONNX model, a ``--shape`` that names no input or
contradicts the model, a constant node the folder could not evaluate, and ONNX
features the IR deliberately does not carry (a used Dropout mask, a skipped
optional input in the middle of a node's inputs).
"""
from __future__ import annotations

import onnx

from zcspec.impl.compiler.errors import GraphError, ShapeError
from zcspec.impl.compiler.op_limits import find, message


class OnnxFileError(GraphError):
    """The file cannot be read as an ONNX model (missing, truncated, corrupt, no graph)."""

    def __init__(self, file: str, why: str):
        self.why = why
        super().__init__(f"not a readable ONNX model: {why}", file=file)


class UnknownInputError(GraphError):
    """``--shape`` names a tensor that is not a graph input of the model."""

    def __init__(self, tensor: str, known: tuple[str, ...], *, why: str = "is not a graph input"):
        self.known = tuple(known)
        listing = ", ".join(map(repr, known)) or "none"
        super().__init__(f"--shape {tensor!r}: {tensor!r} {why}; the model's inputs are {listing}", tensor=tensor)


class InputShapeError(ShapeError):
    """A graph input's shape is dynamic and not fixed by ``--shape``, or ``--shape`` contradicts it."""

    def __init__(self, tensor: str, shape: object, why: str, *, hint: str = ""):
        # ShapeError's generic "--shape NAME=..." advice is replaced by a concrete one naming this input.
        self.shape = shape
        GraphError.__init__(
            self, f"input {tensor!r} has shape {shape!r}: {why}" + (f" ({hint})" if hint else ""), tensor=tensor,
        )


class ShapeInferenceError(GraphError):
    """ONNX shape inference rejected the model (incompatible shapes or types at a node)."""

    def __init__(self, detail: str, *, node: str = ""):
        self.detail = detail
        who = f"node {node!r}: " if node else ""
        super().__init__(f"{who}ONNX shape inference failed: {detail}", node=node)


class DeclaredTypeError(GraphError):
    """A value_info entry or declared graph output gives an element type the graph does not compute."""

    def __init__(self, tensor: str, role: str, declared: int, inferred: int, *, node: str = ""):
        self.declared, self.inferred = declared, inferred
        name = onnx.TensorProto.DataType.Name
        who = "graph output" if role == "output" else "value_info entry of tensor"
        by = f" (written by node {node!r})" if node else ""
        super().__init__(f"{who} {tensor!r}{by} declares element type {name(declared).lower()}, the graph computes "
                         f"{name(inferred).lower()}: the file's annotations contradict its graph", node=node,
                         tensor=tensor)


class FoldError(GraphError):
    """A node whose inputs are all constant could not be evaluated by the ONNX reference implementation."""

    def __init__(self, node: str, op_type: str, why: str):
        self.op_type = op_type
        super().__init__(f"node {node!r} ({op_type}) has only constant inputs but folding it failed: {why}", node=node)


class UnsupportedFeatureError(GraphError):
    """The node uses an ONNX feature the IR does not represent; the message says which and why."""

    def __init__(self, node: str, why: str, *, tensor: str = ""):
        super().__init__(f"node {node!r}: {why}", node=node, tensor=tensor)


class FrozenInputError(GraphError):
    """``--value`` names a tensor that is not a graph input, or gives a value of the wrong shape."""

    def __init__(self, tensor: str, known: tuple[str, ...], why: str):
        self.known = tuple(known)
        listing = f"; the model's inputs are {', '.join(map(repr, known)) or 'none'}" if known else ""
        super().__init__(f"--value {tensor!r}: {tensor!r} {why}{listing}", tensor=tensor)


class DataDependentControlError(UnsupportedFeatureError):
    """An ``If`` whose condition depends on the data: a static IR cannot branch at run time."""

    def __init__(self, node: str, condition: str, inputs: tuple[str, ...]):
        self.inputs = tuple(inputs)
        fix = (f"; fix the input(s) it depends on with --value ({', '.join(map(repr, inputs))})" if inputs else "")
        super().__init__(node, f"If condition {condition!r} depends on the data, so the branch is only known at run "
                               f"time{fix}", tensor=condition)


class RuntimeValueError(UnsupportedFeatureError):
    """An operand that decides a shape, a memory size or the task list is known only at run time.

    Operands that decide only values may be run-time inputs (onnx_nodes.py ``OPERANDS``). ``what``
    says what the operand decides; ``operands`` are the operand tensors; ``inputs`` the graph inputs
    they are computed from, the ones to freeze with ``--value`` (``values=``) so the model becomes
    static. The message names the op and the feature listed in ``zcspec.impl.compiler.op_limits``
    (``runtime-value``)."""

    def __init__(self, node: str, op_type: str, operands: tuple[str, ...], inputs: tuple[str, ...], *,
                 what: str = "the operand is"):
        # ``what`` leads into the tensors: "operand 'shape' is", "the shape of 'y' depends on the values of".
        detail = f"{what} tensor{'s' * (len(operands) > 1)} {', '.join(map(repr, operands))}"
        if inputs:
            detail += f", computed from graph input{'s' if len(inputs) > 1 else ''} {', '.join(map(repr, inputs))}"
        self.op_type, self.operands, self.inputs = op_type, tuple(operands), tuple(inputs)
        super().__init__(node, message(op_type, find(op_type, "runtime-value"), detail),
                         tensor=operands[0] if operands else "")
