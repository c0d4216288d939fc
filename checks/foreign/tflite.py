"""LiteRT's arena plan: the op list of a ``.tflite`` file, and where its interpreter put each tensor.

A ``.tflite`` file (FlatBuffers, identifier ``TFL3``, LiteRT's ``schema.fbs``) holds the program but
not the plan: the builtin interpreter plans its arena when it allocates the tensors. So the plan
has two sources:

- the file (read here by field number with checks/foreign/flatbuf.py, no LiteRT needed): the first
  subgraph's tensors (shape and type give the bytes), its operators in order (the steps: an
  operator reads its inputs and writes its outputs), its inputs and outputs (alive from step 0 and
  to the end), and which tensors are constants (a buffer with data) or variables: neither is in
  the arena;
- the **arena record**: each arena tensor's offset, its data pointer minus the lowest pointer of
  the arena's tensors, taken from LiteRT's builtin interpreter after ``allocate_tensors()`` with
  the default delegates off (XNNPACK would keep the intermediate tensors to itself).
  :func:`record_arena` makes it (needs the ``litert`` extra); ``zcspec import litert`` runs it, or
  reads one saved with ``--arena FILE``.

The arena is of kind ``activations``, aligned to 64 bytes (LiteRT's ``kDefaultTensorAlignment``).
LiteRT's arena planner shares two kinds of buffer by design (``IdentifyInPlaceTensors``), and the
reader takes them as the arena shows them:

- a view (RESHAPE, SQUEEZE, EXPAND_DIMS, BITCAST: the data is not changed) whose output sits at its
  first input's offset with the same size: the output is an alias of the input, however long the
  input lives on;
- an element-wise operator whose output sits in the bytes of an input of the same size, when no
  tensor of that memory (the input, its root, the root's other views) is used after the operator
  or is a model output (the caller reads it after the last operator):
  the output is an alias of the input, and the step an in-place step that reads each element where
  it writes it. If a view of that memory is still read later, the operator overwrites it: the two
  stay separate tensors (LiteRT's planner counts the readers of the input and of its root, not of
  the root's other views: google-ai-edge/LiteRT#8928).

Any other sharing stays two tensors, for LAYOUT-NO-OVERLAP to judge.
Not visible: node temporaries (a kernel's scratch tensors, e.g. MEAN's, are added at prepare time
and are not in the file), and the arena's own base.
"""
from __future__ import annotations

import json
import math
import os

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.artefact_file import read_bytes
from zcspec.checks.foreign.flatbuf import FlatbufferError, N, Node
from zcspec.spec.capabilities import PLANNERS
from zcspec.spec.observables.plan import Arena, ByteCopy, ByteRange, InPlaceStep, PlacedTensor, PlanObservation

ALIGNMENT = PLANNERS["litert"].alignment   # tensorflow/lite/util.h kDefaultTensorAlignment, ArenaPlanner's
# Element-wise builtin operators (BuiltinOperator codes of schema.fbs): LiteRT's arena planner may
# compute their output in the bytes of an input whose life ends there (the kernels' in-place flags).
ELEMENTWISE = {0: "ADD", 14: "LOGISTIC", 18: "MUL", 19: "RELU", 21: "RELU6", 28: "TANH", 41: "SUB", 42: "DIV",
               47: "EXP", 55: "MAXIMUM", 57: "MINIMUM", 59: "NEG", 75: "SQRT", 76: "RSQRT", 78: "POW", 92: "SQUARE",
               98: "LEAKY_RELU", 99: "SQUARED_DIFFERENCE", 101: "ABS", 117: "HARD_SWISH", 150: "GELU"}
# Operators that only reinterpret their first input (kTfLiteInplaceOpDataUnmodified): LiteRT's planner
# gives their output the input's buffer whatever else reads the input.
VIEWS = {22: "RESHAPE", 43: "SQUEEZE", 70: "EXPAND_DIMS", 159: "BITCAST"}
MAX_FILE_BYTES = 1 << 30
RECORD_FORMAT = "zcspec litert arena 1"
# TensorType (schema.fbs) -> bytes per element; STRING, RESOURCE and VARIANT have none.
ELEMENT_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8, 15: 4, 16: 2, 17: 1,
                 18: 2, 19: 1}


class TfliteError(UsageError):
    """A ``.tflite`` file or an arena record this reader cannot take; the message names the file."""


def _bytes(path: str) -> bytes:
    return read_bytes(path, MAX_FILE_BYTES, TfliteError)


def record_arena(path: str) -> dict:
    """Run LiteRT's builtin interpreter on ``path`` and record each arena tensor's offset (module doc)."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType   # the litert extra
        from importlib.metadata import version
    except ImportError as e:
        raise TfliteError("reading the arena needs LiteRT's interpreter: pip install -e '.[litert]', or give a "
                          "saved record with --arena", file=path) from e
    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    model = _Model(_bytes(path), path)
    pointers = {}
    for i in model.arena_tensors():
        try:
            pointers[i] = int(it.tensor(i)().ctypes.data)
        except ValueError:
            continue          # no data: the interpreter left it unallocated
    base = min(pointers.values(), default=0)
    return {"format": RECORD_FORMAT, "litert": version("ai-edge-litert"),
            "offsets": {str(i): p - base for i, p in sorted(pointers.items())}}


def load_record(path: str) -> dict[int, int]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise TfliteError(f"cannot be read as an arena record: {e}", file=path) from e
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT or not isinstance(data.get("offsets"), dict):
        raise TfliteError(f"is not an arena record (format {RECORD_FORMAT!r} with offsets)", file=path)
    try:
        return {int(k): int(v) for k, v in data["offsets"].items()}
    except (TypeError, ValueError) as e:
        raise TfliteError(f"offsets must map tensor indices to byte offsets ({e})", file=path) from e


class _Model:
    def __init__(self, buf: bytes, path: str):
        self.path = path
        try:
            model = Node.root(buf, b"TFL3")
            subgraphs = model.tables(2)
            if not subgraphs:
                raise TfliteError("holds no subgraph", file=path)
            self.buffers = [b.scalars(0, N.Uint8Flags) for b in model.tables(4)]
            sg = subgraphs[0]
            self.tensors = [(t.scalars(0, N.Int32Flags), t.scalar(1, N.Int8Flags), t.scalar(2, N.Uint32Flags),
                             t.string(3), bool(t.scalar(5, N.BoolFlags))) for t in sg.tables(0)]
            self.inputs, self.outputs = sg.scalars(1, N.Int32Flags), sg.scalars(2, N.Int32Flags)
            codes = [max(c.scalar(0, N.Int8Flags), c.scalar(3, N.Int32Flags)) for c in model.tables(1)]
            self.operators = [(o.scalar(0, N.Uint32Flags), o.scalars(1, N.Int32Flags), o.scalars(2, N.Int32Flags))
                              for o in sg.tables(3)]
        except FlatbufferError as e:
            raise TfliteError(f"is not a well-formed LiteRT model: {e}", file=path) from None
        self.codes = codes
        for k, (code, ins, outs) in enumerate(self.operators):
            if code >= len(codes):
                raise TfliteError(f"operator {k} names operator code {code}; the model has {len(codes)}", file=path)
            for i in list(ins) + list(outs):
                if i >= len(self.tensors) or i < -1:
                    raise TfliteError(f"operator {k} names tensor {i}; the subgraph has {len(self.tensors)}", file=path)

    def constant(self, i: int) -> bool:
        buffer = self.tensors[i][2]
        return 0 < buffer < len(self.buffers) and len(self.buffers[buffer]) > 0

    def arena_tensors(self) -> list[int]:
        return [i for i, t in enumerate(self.tensors) if not self.constant(i) and not t[4]]

    def nbytes(self, i: int) -> int:
        shape, kind = self.tensors[i][0], self.tensors[i][1]
        if kind not in ELEMENT_BYTES:
            raise TfliteError(f"tensor {i} ({self.tensors[i][3]!r}) has type {kind}, whose size this reader does "
                              "not know", file=self.path)
        if any(d < 0 for d in shape):
            raise TfliteError(f"tensor {i} ({self.tensors[i][3]!r}) has a dynamic shape {list(shape)}", file=self.path)
        return math.prod(shape) * ELEMENT_BYTES[kind]


def read_tflite(path: str | os.PathLike, offsets: dict[int, int], *, alignment: int = ALIGNMENT) -> PlanObservation:
    """The plan of ``path``'s first subgraph with the arena ``offsets`` (tensor index -> byte offset)."""
    path = str(path)
    model = _Model(_bytes(path), path)
    n = len(model.operators)
    steps: dict[int, set[int]] = {}
    reads: dict[int, set[int]] = {}
    writes: dict[int, set[int]] = {}
    for k, (_, ins, outs) in enumerate(model.operators):
        for i in ins:
            if i >= 0:
                steps.setdefault(i, set()).add(k)
                reads.setdefault(i, set()).add(k)
        for i in outs:
            if i >= 0:
                steps.setdefault(i, set()).add(k)
                writes.setdefault(i, set()).add(k)
    arena = set(model.arena_tensors())
    unknown = sorted(set(offsets) - arena)
    if unknown:
        raise TfliteError(f"the arena record places tensor(s) {unknown[:5]}, which are not arena tensors of the model",
                          file=path)
    tensors = []
    for i in sorted(set(offsets)):
        s = set(steps.get(i, ()))
        if i in model.inputs:
            s.add(0)
        if i in model.outputs:
            s.add(max(n - 1, 0))
        if not s:
            continue
        size = model.nbytes(i)
        tensors.append(PlacedTensor(name=_name(model, i), region="arena", offset=offsets[i], size=size, aligned_size=size,
                                    first=min(s), last=max(s), block=None, zero_copy=False))
    kept = {t.name for t in tensors}
    name = {i: _name(model, i) for i in offsets}
    tensors, in_place = _in_place(model, tensors, name)
    return PlanObservation(
        order=tuple(f"{k}:op{model.codes[c]}" for k, (c, _, _) in enumerate(model.operators)), tensors=tuple(tensors),
        regions={"arena": max((t.end for t in tensors), default=0)}, arenas={"arena": Arena("activations", alignment)},
        consumers={name[i]: tuple(sorted(v)) for i, v in reads.items() if name.get(i) in kept},
        writes={name[i]: tuple(sorted(v)) for i, v in writes.items() if name.get(i) in kept},
        graph_inputs=tuple(name[i] for i in model.inputs if name.get(i) in kept),
        graph_outputs=tuple(name[i] for i in model.outputs if name.get(i) in kept), in_place=in_place,
        planner="litert")


def _in_place(model: _Model, tensors: list, name: dict):
    """Views and element-wise outputs in the bytes of their input, by design (module doc)."""
    by_name = {t.name: t for t in tensors}
    index = {v: i for i, v in name.items()}
    family: dict[str, set[int]] = {}        # root name -> tensor indices sharing its memory
    in_place = []

    def share(k: int, out, src) -> None:
        root = src.alias_of or src.name
        by_name[out.name] = attrs.evolve(out, alias_of=root)
        family.setdefault(root, {index[root]}).add(index[out.name])

    for k, (code, ins, outs) in enumerate(model.operators):
        op = model.codes[code]
        if op not in VIEWS and op not in ELEMENTWISE:
            continue
        for o in outs:
            out = by_name.get(name.get(o, ""))
            if out is None:
                continue
            for pos, i in enumerate(ins):
                src = by_name.get(name.get(i, ""))
                if src is None or src is out or (src.offset, src.size) != (out.offset, out.size):
                    continue
                if op in VIEWS:
                    if pos == 0:
                        share(k, out, src)
                        break
                    continue
                members = family.get(src.alias_of or src.name, {i})
                if max(by_name[name[m]].last for m in members) != k or members & set(model.outputs):
                    continue        # the memory is read after k (an output: by the caller): an overwrite
                share(k, out, src)
                in_place.append(InPlaceStep(k, out.name, (ByteRange(out.offset, out.end),),
                                            (ByteCopy(out.offset, out.end, out.offset),)))
                break
    return [by_name[t.name] for t in tensors], tuple(in_place)


def _name(model: _Model, i: int) -> str:
    return f"t{i}:{model.tensors[i][3]}" if model.tensors[i][3] else f"t{i}"
