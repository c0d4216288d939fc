"""Errors of the compiler: bad graphs, bad options and bad model files.

:class:`CompilerError` is the compiler's root (under ``ZcspecError``, docs/errors.md).
Every error here is a :class:`GraphError`: bad input (``BadInput``, so the command
line exits with 2) and a ``ValueError``, with structured fields, so tests and the
command line can use them without parsing the message. The message names the
culprit (file, node, tensor) and the broken rule.
"""
from __future__ import annotations

from zcspec.impl.platform.errors import BadInput, ZcspecError


class CompilerError(ZcspecError):
    """Root of the compiler's errors (frontend, passes, memory planning, tasks, model file)."""


class GraphError(CompilerError, BadInput, ValueError):
    """Bad input: the graph (or the file it came from) breaks a rule. ``in_file`` (from ``BadInput``)
    names the file it came from."""

    def __init__(self, message: str, *, file: str = "", node: str = "", tensor: str = ""):
        self.file, self.node, self.tensor = file, node, tensor
        where = f"{file}: " if file else ""
        super().__init__(where + message)


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


class ShapeError(GraphError):
    def __init__(self, tensor: str, shape: object, why: str, *, node: str = ""):
        self.shape = shape
        fix = " (fix it with --shape NAME=1x3x224x224)" if "dynamic" in why else ""
        super().__init__(f"tensor {tensor!r} has shape {shape!r}: {why}{fix}", tensor=tensor, node=node)


class UnsupportedOpError(GraphError):
    """A node's op type is not in the op table; ``domain`` is its ONNX domain when not the default one,
    ``why`` what to do instead (the front end says it where it knows)."""

    def __init__(self, op_type: str, *, node: str = "", domain: str = "", why: str = ""):
        self.op_type, self.domain = op_type, domain
        of = f" of domain {domain!r}" if domain else ""
        super().__init__(f"node {node!r} has unsupported op type {op_type!r}{of}{': ' + why if why else ''}",
                         node=node)


class AttributeError_(GraphError):
    """A node attribute has a type the IR cannot carry or a value its op rejects."""

    def __init__(self, node: str, attr: str, why: str):
        self.attr = attr
        super().__init__(f"node {node!r} attribute {attr!r}: {why}", node=node)


class OptionError(GraphError):
    """An option the compiler or its planner was given has a value it cannot use: ``field`` names
    it, ``value`` is what was given, ``options`` says whose (``compile`` or ``plan``)."""

    def __init__(self, field: str, value: object, why: str, *, options: str = "compile"):
        self.field, self.value, self.options = field, value, options
        super().__init__(f"{options} option {field}={value!r}: {why}")


class GraphFormatError(GraphError):
    """A serialised graph (JSON) is malformed or of an unknown version."""


class ArtefactFormatError(GraphError):
    """An artefact's JSON form (a plan, its options, compile options) is malformed; ``path`` locates the culprit."""

    def __init__(self, path: str, why: str, *, file: str = ""):
        self.path, self.why = path, why
        super().__init__(f"{path}: {why}", file=file)
