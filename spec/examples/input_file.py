"""Examples for the input-file claims: small graphs as a front end receives them, refused or accepted."""
from __future__ import annotations

import attrs

from zcspec.spec.examples.build import Example
from zcspec.spec.observables.input_file import ImportOutcome, InputFileObservation, InputNode, InputTensor, TypedValue

ACCEPTED = ImportOutcome(True)


def _refused(message: str) -> ImportOutcome:
    return ImportOutcome(False, ("GraphError", "BadInput", "Exception"), message)


def _onnx(*nodes: InputNode, outcome: ImportOutcome = ACCEPTED, dims=(2, 3), outputs=("y",)) -> InputFileObservation:
    """An opset-17 ONNX model with graph input ``x`` of ``dims``, initializer ``w`` and ``nodes``."""
    return InputFileObservation("onnx", "model.onnx", outcome, opset=17, nodes=nodes, graph_inputs=("x",),
                                constants=("w",), graph_outputs=outputs, shaped=(InputTensor("x", dims),))


_MUL = InputNode("scale", "Mul", inputs=("x", "w"), outputs=("y",))
_MUL_ONE = InputNode("scale", "Mul", inputs=("x",), outputs=("y",))
_GELU_MS = InputNode("gelu", "Gelu", "com.microsoft", inputs=("x",), outputs=("y",))
_LOOP = (InputNode("add", "Add", inputs=("x", "r"), outputs=("a",)), InputNode("relu", "Relu", inputs=("a",),
                                                                                outputs=("r",)),
         InputNode("out", "Identity", inputs=("r",), outputs=("y",)))
_GHOST = InputNode("add", "Add", inputs=("x", "ghost"), outputs=("y",))
_TWICE = (InputNode("a", "Relu", inputs=("x",), outputs=("y",)), InputNode("b", "Neg", inputs=("x",), outputs=("y",)))
_RELU = InputNode("relu", "Relu", inputs=("x",), outputs=("y",))
_DROP = InputNode("drop", "Dropout", inputs=("x", "", "mode"), outputs=("y",))   # training_mode: a constant true

_V4 = ('{"format": "zcspec-graph", "version": 4, "name": "g", "nodes": [], "tensors": [], "weights": []}')


# A well-formed version-1 file: x -> Relu -> NetOutput.
_RELU_V1 = ('{"format": "zcspec-graph", "version": 1, "name": "g", "nodes": ['
            '{"name": "x", "op_type": "Data", "inputs": [], "outputs": ["x"], "attrs": {"index": 0}, "stream": 0}, '
            '{"name": "relu", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}, "stream": 0}, '
            '{"name": "NetOutput", "op_type": "NetOutput", "inputs": ["y"], "outputs": [], "attrs": {}, "stream": 0}], '
            '"tensors": [{"name": "x", "shape": [2], "dtype": "float32", "format": "ND"}, '
            '{"name": "y", "shape": [2], "dtype": "float32", "format": "ND"}], "weights": []}')


def _graph_json(outcome: ImportOutcome, document: str = _V4) -> InputFileObservation:
    """A graph JSON file, as its text: by default of a version the format does not have."""
    return InputFileObservation("graph_json", "graph.json", outcome, document=document)


def _unreadable(message: str) -> ImportOutcome:
    return ImportOutcome(False, ("GraphFormatError", "GraphError", "BadInput", "Exception"), message)


def _typed(imported_y) -> InputFileObservation:
    """``_RELU`` accepted: ONNX infers x and y as float32 2x3; the import gives y ``imported_y``."""
    typed = (TypedValue("x", (2, 3), "float32"), TypedValue("y", (2, 3), "float32"))
    return attrs.evolve(_onnx(_RELU), typed=typed, imported=(typed[0], TypedValue("y", imported_y, "float32")))


EXAMPLES = (
    Example("INPUT-ARITY-REFUSED", _onnx(_MUL_ONE, outcome=_refused("node 'scale' (Mul) has 1 inputs, expects 2")),
            _onnx(_MUL_ONE), culprit="input file model.onnx",
            why="a Mul with one input imported; ONNX's Mul takes two"),
    Example("INPUT-UNKNOWN-OP-REFUSED", _onnx(_GELU_MS, outcome=_refused("node 'gelu': op 'Gelu' of domain "
                                                                         "'com.microsoft' is not supported")),
            _onnx(_GELU_MS), culprit="input file model.onnx",
            why="onnxruntime's com.microsoft Gelu imported as if it were an ONNX op"),
    Example("INPUT-CYCLE-REFUSED", _onnx(*_LOOP, outcome=_refused("nodes 'add', 'relu' form a cycle")),
            _onnx(*_LOOP), culprit="input file model.onnx", why="Add reads Relu's output, which reads Add's: imported"),
    Example("INPUT-DANGLING-REFUSED", _onnx(_GHOST, outcome=_refused("tensor 'ghost' read by node 'add' is written "
                                                                     "by nothing")),
            _onnx(_GHOST), culprit="input file model.onnx", why="Add reads 'ghost', which nothing writes: imported"),
    Example("INPUT-ONE-WRITER-REFUSED", _onnx(*_TWICE, outcome=_refused("tensor 'y' is written by 'a' and 'b'")),
            _onnx(*_TWICE), culprit="input file model.onnx", why="two nodes write 'y': imported"),
    Example("INPUT-STATIC-SHAPE-REFUSED", _onnx(_RELU, dims=("batch", 3), outcome=_refused(
                "input 'x': dimension 0 ('batch') is dynamic and not fixed")),
            _onnx(_RELU, dims=("batch", 3)), culprit="input file model.onnx",
            why="x's first dim is the symbol 'batch' and no shape was given for it: imported"),
    Example("INPUT-FORMAT-REFUSED", _graph_json(_refused("graph format version 4 is not supported")),
            _graph_json(ACCEPTED), culprit="input file graph.json", why="a version-4 graph JSON file imported"),
    Example("INPUT-FORMAT-REFUSAL-JUSTIFIED", _graph_json(_unreadable("graph format version 4 is not supported")),
            _graph_json(_unreadable("graph format version 1 is not supported"), _RELU_V1),
            culprit="file 'graph.json'", why="a well-formed version-1 file refused as unreadable"),
    Example("INPUT-RANDOM-REFUSED", attrs.evolve(_onnx(_DROP, outcome=_refused(
                "node 'drop' (Dropout): training mode with a non-zero ratio is not supported")), values={"mode": (1.0,)}),
            attrs.evolve(_onnx(_DROP), values={"mode": (1.0,)}), culprit="input file model.onnx",
            why="a Dropout in training mode with the default ratio 0.5 drops random elements: imported"),
    Example("INPUT-REFUSAL-NAMES-FAULT", _onnx(*_TWICE, outcome=_refused("tensor 'y' is written by 'a' and 'b'")),
            _onnx(*_TWICE, outcome=_refused("the model is not supported")), culprit="input file model.onnx",
            why="the refusal of a file in which two nodes write 'y' names neither 'y' nor anything else"),
    Example("INPUT-IMPORT-TYPES", _typed(imported_y=(2, 3)), _typed(imported_y=(3, 2)), culprit="tensor 'y'",
            why="the import turned the Relu's 2x3 output around"),
)

