"""Errors of the compiler front half: bad graphs and bad model files.

Every error is a :class:`GraphError` (a ``ValueError``) with structured fields,
so tests and the command line can use them without parsing the message. The
message names the culprit (file, node, tensor) and the broken rule. The command
line maps any ``GraphError`` to exit code 2.
"""
from __future__ import annotations


class GraphError(ValueError):
    """Bad input: the graph (or the file it came from) breaks a rule."""

    def __init__(self, message: str, *, file: str = "", node: str = "", tensor: str = ""):
        self.file, self.node, self.tensor = file, node, tensor
        where = f"{file}: " if file else ""
        super().__init__(where + message)

    def in_file(self, file: str) -> "GraphError":
        """The same error, re-raised with the file it came from named first."""
        err = self.__class__.__new__(self.__class__)
        err.__dict__.update(self.__dict__)
        err.file = file
        err.args = (f"{file}: {self.args[0]}",) if not self.file else self.args
        return err


class CycleError(GraphError):
    def __init__(self, cycle: tuple[str, ...]):
        self.cycle = tuple(cycle)
        super().__init__(
            "graph has a cycle through nodes " + " -> ".join(repr(n) for n in cycle + cycle[:1]),
            node=cycle[0],
        )


class MissingTensorError(GraphError):
    def __init__(self, tensor: str, *, node: str = "", role: str = "input"):
        self.role = role
        who = f"node {node!r} reads" if node else f"graph {role}"
        super().__init__(
            f"{who} tensor {tensor!r}, which no node, graph input or weight produces",
            node=node, tensor=tensor,
        )


class DuplicateNameError(GraphError):
    def __init__(self, kind: str, name: str, *, node: str = ""):
        self.kind = kind
        super().__init__(f"duplicate {kind} name {name!r}", node=node, tensor=name if kind == "tensor" else "")


class UnknownDTypeError(GraphError):
    def __init__(self, dtype: object, *, tensor: str = ""):
        self.dtype = dtype
        where = f"tensor {tensor!r} has " if tensor else ""
        super().__init__(f"{where}unknown or unsized dtype {dtype!r}", tensor=tensor)


class ShapeError(GraphError):
    def __init__(self, tensor: str, shape: object, why: str, *, node: str = ""):
        self.shape = shape
        fix = " (fix it with --shape NAME=1x3x224x224)" if "dynamic" in why else ""
        super().__init__(f"tensor {tensor!r} has shape {shape!r}: {why}{fix}", tensor=tensor, node=node)


class SizeOverflowError(GraphError):
    def __init__(self, *, tensor: str = "", shape: tuple = (), nbytes: int | None = None):
        self.shape, self.nbytes = shape, nbytes
        size = f" ({nbytes} bytes)" if nbytes is not None else ""
        super().__init__(
            f"tensor {tensor!r} of shape {shape!r} is too large{size}: sizes must fit in int64 - 64",
            tensor=tensor,
        )


class UnsupportedOpError(GraphError):
    def __init__(self, op_type: str, *, node: str = ""):
        self.op_type = op_type
        super().__init__(f"node {node!r} has unsupported op type {op_type!r}", node=node)


class AttributeError_(GraphError):
    """A node attribute has a type the IR cannot carry or a value its op rejects."""

    def __init__(self, node: str, attr: str, why: str):
        self.attr = attr
        super().__init__(f"node {node!r} attribute {attr!r}: {why}", node=node)


class GraphFormatError(GraphError):
    """A serialised graph (JSON) is malformed or of an unknown version."""
