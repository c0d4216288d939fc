"""The LiteRT models zcspec keeps (checks/foreign/programs/litert/), built with LiteRT's schema API.

Each model is a small list of builtin operators over float32 tensors (constant weights filled with
an even ramp; EXPAND_DIMS's axis is an int32 constant 0), written with the object API LiteRT ships (``ai_edge_litert.schema_py_generated``; no
TensorFlow), with a NumPy reference of what it computes. ``write_programs`` builds each
``model.tflite``, records where LiteRT's builtin interpreter puts its tensors (``arena.json``,
checks/foreign/tflite.py ``record_arena``), runs it against the reference, with the arena planner's
sharing and with ``experimental_preserve_all_tensors`` (no buffer reused: a difference that goes
away there is the planner's), and writes ``program.json``. Needs the ``litert`` extra; reading the kept
files needs nothing:

    python -m zcspec.checks.foreign.litert_programs [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import attrs
import numpy as np

from zcspec.checks.foreign.tflite import record_arena

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "litert"


@attrs.frozen
class Model:
    name: str
    what: str
    shapes: tuple[tuple[int, ...], ...]      # tensor i's shape
    ops: tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]   # (op, inputs, outputs)
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    weights: tuple[int, ...] = ()           # constant tensors (an even ramp from -1 to 1)
    axes: tuple[int, ...] = ()              # int32 constants holding 0 (EXPAND_DIMS's axis)
    expect: str = "clean"                   # or the claim a known bug of LiteRT's breaks
    issue: str = ""


MODELS = (
    Model("chain-concat", "add, mul, add, a concatenation of two live tensors, mul: reuse around a concat",
          ((4, 8), (4, 8), (4, 8), (4, 8), (8, 8), (8, 8)),
          (("ADD", (0, 0), (1,)), ("MUL", (1, 1), (2,)), ("ADD", (1, 2), (3,)), ("CONCATENATION", (2, 3), (4,)),
           ("MUL", (4, 4), (5,))), (0,), (5,)),
    Model("residual-ladder", "three residual additions, each input kept alive across a branch of two ops",
          ((2, 16),) * 10,
          (("MUL", (0, 0), (1,)), ("ADD", (1, 1), (2,)), ("ADD", (0, 2), (3,)), ("MUL", (3, 3), (4,)),
           ("ADD", (4, 4), (5,)), ("ADD", (3, 5), (6,)), ("MUL", (6, 6), (7,)), ("ADD", (7, 7), (8,)),
           ("ADD", (6, 8), (9,))), (0,), (9,)),
    Model("two-outputs", "two outputs, one of them computed early and kept to the end",
          ((3, 5), (3, 5), (3, 5), (3, 5), (6, 5), (6, 5)),
          (("ADD", (0, 0), (1,)), ("MUL", (0, 1), (2,)), ("ADD", (2, 2), (3,)), ("CONCATENATION", (3, 2), (4,)),
           ("MUL", (4, 4), (5,))), (0,), (1, 5)),
    # The planner lets an in-place ADD take the buffer of a view of the FULLY_CONNECTED output while
    # another view of it is still to be read: the second read sees the sum (google-ai-edge/LiteRT#8928).
    Model("fc-view-read-twice", "FULLY_CONNECTED, its output flattened and read through two reshapes: an "
          "element-wise ADD on the first (computed in place) and a MUL on the second after it",
          ((2, 8), (8, 8), (2, 8), (16,), (2, 8), (2, 8), (2, 8), (2, 8)),
          (("FULLY_CONNECTED", (0, 1, -1), (2,)), ("RESHAPE", (2,), (3,)), ("RESHAPE", (3,), (4,)),
           ("ADD", (4, 0), (5,)), ("RESHAPE", (3,), (6,)), ("MUL", (6, 5), (7,))), (0,), (7,), weights=(1,),
          expect="LAYOUT-NO-OVERLAP", issue="google-ai-edge/LiteRT#8928"),
    Model("fc-view-add-in-place", "FULLY_CONNECTED, its output reshaped twice and added to the input in "
          "place: the views and the in-place ADD of fc-view-read-twice without the second read",
          ((2, 8), (8, 8), (2, 8), (16,), (2, 8), (2, 8), (2, 8)),
          (("FULLY_CONNECTED", (0, 1, -1), (2,)), ("RESHAPE", (2,), (3,)), ("RESHAPE", (3,), (4,)),
           ("ADD", (4, 0), (5,)), ("MUL", (5, 0), (6,))), (0,), (6,), weights=(1,)),
)

_NUMPY = {"ADD": np.add, "MUL": np.multiply, "SUB": np.subtract, "MAXIMUM": np.maximum, "TANH": np.tanh,
          "LOGISTIC": lambda x: 1 / (1 + np.exp(-x)), "RELU": lambda x: np.maximum(x, 0)}
# The options table each builtin operator takes in the schema (none: no options).
_OPTIONS = {"ADD": "AddOptions", "MUL": "MulOptions", "SUB": "SubOptions", "MAXIMUM": "MaximumMinimumOptions",
            "FULLY_CONNECTED": "FullyConnectedOptions", "EXPAND_DIMS": "ExpandDimsOptions"}
# Operators that only reinterpret their first input's data in another shape.
VIEWS = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")


def weight(model: Model, i: int) -> np.ndarray:
    shape = model.shapes[i]
    return np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)


def reference(model: Model, x: np.ndarray) -> list[np.ndarray]:
    values = {model.inputs[0]: x, **{i: weight(model, i) for i in model.weights}}
    for op, ins, outs in model.ops:
        args = [values[i] for i in ins if i >= 0 and i not in model.axes]
        shape = model.shapes[outs[0]]
        if op == "CONCATENATION":
            values[outs[0]] = np.concatenate(args, axis=0)
        elif op in VIEWS:
            values[outs[0]] = args[0].reshape(shape)
        elif op == "FULLY_CONNECTED":     # y = x W^T over the rows of x, as LiteRT's kernel computes it
            values[outs[0]] = (args[0].reshape(-1, args[1].shape[1]) @ args[1].T).reshape(shape)
        else:
            values[outs[0]] = _NUMPY[op](*args)
    return [values[o] for o in model.outputs]


def build(model: Model) -> bytes:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as S   # the litert extra

    m = S.ModelT()
    m.version = 3
    m.buffers = [S.BufferT()]
    sg = S.SubGraphT()
    sg.tensors = []
    for i, shape in enumerate(model.shapes):
        t = S.TensorT()
        t.shape, t.type, t.name, t.buffer = list(shape), S.TensorType.FLOAT32, f"x{i}", 0
        if i in model.weights or i in model.axes:
            data = S.BufferT()
            data.data = list(weight(model, i).tobytes() if i in model.weights else np.int32(0).tobytes())
            m.buffers.append(data)
            t.buffer = len(m.buffers) - 1
            t.type = S.TensorType.FLOAT32 if i in model.weights else S.TensorType.INT32
        sg.tensors.append(t)
    sg.inputs, sg.outputs = list(model.inputs), list(model.outputs)
    codes: list[int] = []
    sg.operators = []
    for op, ins, outs in model.ops:
        code = getattr(S.BuiltinOperator, op)
        if code not in codes:
            codes.append(code)
        o = S.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = codes.index(code), list(ins), list(outs)
        if op == "CONCATENATION":
            options = S.ConcatenationOptionsT()
            options.axis = 0
            o.builtinOptionsType, o.builtinOptions = S.BuiltinOptions.ConcatenationOptions, options
        elif op == "RESHAPE":
            options = S.ReshapeOptionsT()
            options.newShape = list(model.shapes[outs[0]])
            o.builtinOptionsType, o.builtinOptions = S.BuiltinOptions.ReshapeOptions, options
        elif op == "SQUEEZE":        # the views drawn squeeze their leading dimension of 1
            options = S.SqueezeOptionsT()
            options.squeezeDims = [0]
            o.builtinOptionsType, o.builtinOptions = S.BuiltinOptions.SqueezeOptions, options
        elif op in _OPTIONS:
            o.builtinOptionsType = getattr(S.BuiltinOptions, _OPTIONS[op])
            o.builtinOptions = getattr(S, f"{_OPTIONS[op]}T")()
        sg.operators.append(o)
    m.subgraphs = [sg]
    m.operatorCodes = []
    for code in codes:
        c = S.OperatorCodeT()
        c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), 1
        m.operatorCodes.append(c)
    fb = flatbuffers.Builder(1024)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def interpret(path: Path, model: Model, *, preserve_all_tensors: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """(LiteRT's builtin interpreter's output, the NumPy reference's) for each output of ``model`` on an
    even ramp input (with ``preserve_all_tensors``, the interpreter reuses no buffer)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                     experimental_preserve_all_tensors=preserve_all_tensors)
    it.allocate_tensors()
    x = np.linspace(-1, 1, int(np.prod(model.shapes[model.inputs[0]])), dtype=np.float32).reshape(
        model.shapes[model.inputs[0]])
    it.set_tensor(model.inputs[0], x)
    it.invoke()
    return [(it.get_tensor(o), r) for o, r in zip(model.outputs, reference(model, x))]


def run(path: Path, model: Model, *, preserve_all_tensors: bool = False) -> float:
    """The largest difference between LiteRT's builtin interpreter and the NumPy reference."""
    return max(float(np.abs(got - want).max()) for got, want in
               interpret(path, model, preserve_all_tensors=preserve_all_tensors))


def write_programs(out: Path = PROGRAMS_DIR, only=()) -> list[str]:
    from importlib.metadata import version

    lines = []
    for model in MODELS:
        if only and model.name not in only:
            continue
        folder = out / model.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model.tflite").write_bytes(build(model))
        (folder / "arena.json").write_text(json.dumps(record_arena(str(folder / "model.tflite")), indent=1) + "\n")
        diff = run(folder / "model.tflite", model)
        kept = run(folder / "model.tflite", model, preserve_all_tensors=True)
        meta = {"program": model.name, "what": model.what, "expect": model.expect, "issue": model.issue,
                "litert": version("ai-edge-litert"), "max_abs_diff_vs_numpy": diff, "matches_reference": diff <= 1e-5,
                "max_abs_diff_vs_numpy_preserve_all_tensors": kept}
        (folder / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{model.name}: LiteRT {meta['litert']}, max |diff| to NumPy {diff:.3g} "
                     f"({kept:.3g} with preserve_all_tensors)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help="remake only these models")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    args = parser.parse_args(argv)
    for line in write_programs(args.out, args.only):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
