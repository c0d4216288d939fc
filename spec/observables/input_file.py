"""A model file handed to a front end, as the spec sees it, and what the import did with it.

The file is an ONNX model or a zcspec graph JSON file (docs/graph-format.md). The observation
transcribes its top-level graph as the file writes it: each node's op type and domain, the tensors it
reads (in input order, ``""`` for an omitted optional input) and writes, the node names it waits on (a
graph JSON file's control inputs), the graph's inputs with the dims the file gives them, its constants
(ONNX initializers, graph JSON weights) and outputs, and the import's outcome: accepted, or the error
class and message it refused the file with. The claims of spec/invariants/input_file.py judge the
outcome against what the file itself shows (a cycle, a tensor nothing writes, an input count ONNX's
schema does not allow); nothing here says what the front end's own rules are.
"""
from __future__ import annotations

from typing import Literal

import attrs

Format = Literal["onnx", "graph_json"]
# An attribute as the file writes it: a number, a text, or a list of one of them.
AttributeValue = int | float | str | tuple[int, ...] | tuple[float, ...] | tuple[str, ...]
# The most elements a constant may have for its values to be transcribed.
SMALL = 16


@attrs.frozen
class InputNode:
    """A node as the file writes it. ``domain``: ONNX's operator-set domain (``""`` is ``ai.onnx``; a
    graph JSON node has none). ``attributes``: its attributes of number and text kinds (int, float,
    string and their lists) as written; attributes the file gives as tensors or graphs are left out."""

    name: str
    op_type: str
    domain: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    control_inputs: tuple[str, ...] = ()
    attributes: dict[str, AttributeValue] = attrs.field(factory=dict)


@attrs.frozen
class InputTensor:
    """A tensor whose shape the file gives: ``dims`` as written, an int for a fixed dim and a text for any
    other (its symbolic name, ``"?"`` for a dim with no value, or the JSON value's text: ``"null"``,
    ``"true"``); ``None`` when the file gives no shape at all."""

    name: str
    dims: tuple[int | str, ...] | None = None


@attrs.frozen
class TypedValue:
    """A tensor with a fixed shape and an element type: ``dims`` all integers, ``dtype`` an ONNX type name in
    lower case as the spec's dtype table spells it (``float32``, ``int64``, ``uint4``)."""

    name: str
    dims: tuple[int, ...]
    dtype: str


@attrs.frozen
class ImportOutcome:
    """``accepted``: the import returned a graph; otherwise ``error`` is the refusal's class name and its
    bases (most derived first), ``message`` its text."""

    accepted: bool
    error: tuple[str, ...] = ()
    message: str = ""


@attrs.frozen
class InputFileObservation:
    """``opset``: the default domain's operator-set version an ONNX model imports (0 for a graph JSON
    file: its ops are judged by ONNX's latest schemas). ``shaped``: the tensors whose dims must be fixed for
    the graph to import (an ONNX model's graph inputs that are not initializers; every tensor a graph JSON
    file describes); ``shapes_given``: those of them the caller fixed (``--shape``), which the file's
    dims do not decide. ``graph_inputs``: an ONNX model's graph inputs (a graph JSON file's Data nodes write
    theirs). ``constants``: ONNX initializers (with Constant nodes' outputs written by their node)
    or graph JSON weights. ``graph_outputs``: an ONNX model's graph outputs (a graph JSON
    NetOutput node reads its outputs as inputs). ``duplicates``: names the file gives twice in one list (graph inputs,
    tensor descs, weights), each with the list's name: ``("graph input", "x")``. ``document``: a graph JSON
    file's text as read (None for an ONNX file), which the format claim reads against docs/graph-format.md;
    a graph JSON file whose lists cannot be transcribed has its text alone. ``values``: the elements, as
    numbers in file order, of the small constants an ONNX model gives (initializers and Constant nodes'
    outputs of at most :data:`SMALL` elements: the scalars and short lists that decide what an op does).
    ``typed``: the values of an ONNX model (graph inputs, intermediate values, outputs) to which ONNX's own
    shape inference (``onnx.shape_inference.infer_shapes``) gives a fixed shape and an element type.
    ``imported``: the tensors of the graph the import returned, with the shape and type it gives each (None
    when the import's graph was not transcribed: refused, or a front end that does not show its graph)."""

    format: Format
    file: str
    outcome: ImportOutcome
    opset: int = 0
    nodes: tuple[InputNode, ...] = ()
    graph_inputs: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    graph_outputs: tuple[str, ...] = ()
    shaped: tuple[InputTensor, ...] = ()
    shapes_given: tuple[str, ...] = ()
    duplicates: tuple[tuple[str, str], ...] = ()
    document: str | None = None
    values: dict[str, tuple[float, ...]] = attrs.field(factory=dict)
    typed: tuple[TypedValue, ...] = ()
    imported: tuple[TypedValue, ...] | None = None
