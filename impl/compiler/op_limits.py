"""What the ops of the op table do NOT support: attribute values, element types, opsets, as data.

One home for every deliberate refusal of an op zcspec claims (``ops.OPS``). The ONNX
front end refuses a node that hits an entry with an ``UnsupportedFeatureError`` whose
message is ``message(op, entry, detail)``: it names the op and the entry's ``feature``
verbatim. docs/frontend.md lists the table, and the conformance suite (``zcspec
conformance``) requires every refused ONNX node test to name a feature listed here.

An entry (:class:`Unsupported`) matches a node when all of its predicates hold:

- ``attr`` and ``values``: the IR attribute (the ONNX attribute, or a constant operand the
  front end moved into an attribute; ``default`` when absent) has one of ``values``;
  ``values=None`` means any value (the attribute's presence is the unsupported form);
- ``dtypes``: one of the node's inputs or outputs has one of these element types;
- ``opsets``: the model's default-domain opset is in this inclusive range;
- none of these: the front end detects the case where it has the facts (``find(op, key)``),
  e.g. a sequence-typed graph input, or an operand whose value is known only at run time.

The ``opset`` entries are derived from ONNX's schemas (the versions without shape inference,
which the static IR cannot do without), the others are written here.

Entries under ``ANY_OP`` apply to every op (their dtype predicate to compute ops only: a view
has no kernel) but the ops an entry's ``exempt`` names. The table lists refusals, so an op absent
from it is claimed in every opset, attribute value and element type ONNX allows it.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import attrs

from onnx import defs

from zcspec.impl.compiler import ops
from zcspec.impl.platform.dtypes import DTYPES

ANY_OP = "*"

# Element types stored packed, 2 to 4 elements to a byte (impl/platform/storage.py): the device unpacks
# them for a kernel, but only the kernels of PACKED_OPS (conversion, data movement) are meant for them.
SUB_BYTE = frozenset(d.name for d in DTYPES.values() if d.bits % 8)
PACKED_OPS = frozenset({"Cast", "Transpose"})
# Floats outside numpy's IEEE float16/32/64: bfloat16 and the 8-bit floats (ml_dtypes), which
# kernels computing in numpy's float arithmetic (``common.need_float``) do not take.
KERNEL_FLOATS = frozenset({"float16", "float32", "float64"})
EXOTIC_FLOATS = frozenset(n for n in DTYPES if "float" in n and n not in KERNEL_FLOATS) - SUB_BYTE


@attrs.frozen
class Unsupported:
    """One unsupported feature of an op. ``key`` identifies it in code; ``feature`` is what the
    refusal names; ``why`` says why it is refused and, when there is one, what to do instead."""

    key: str
    feature: str
    why: str
    attr: str | None = None
    values: tuple | None = ()
    default: object = None
    dtypes: frozenset[str] = frozenset()
    opsets: tuple[int, int] | None = None
    exempt: frozenset[str] = frozenset()

    @property
    def detected_by_front_end(self) -> bool:
        return self.attr is None and not self.dtypes and self.opsets is None

    def match(self, attributes: Mapping, dtypes: tuple[str, ...], opset: int) -> str | None:
        """What the node has that this entry refuses (``"is_test=0, opset 6"``), or None. Every
        predicate the entry has must hold; an entry without one never matches here."""
        if self.detected_by_front_end:
            return None
        found = []
        if self.attr is not None:
            value = attributes.get(self.attr, self.default)
            if value is None or not (self.values is None or value in self.values):
                return None
            found.append(f"{self.attr}={value!r}" + ("" if self.attr in attributes else " by default"))
        if self.dtypes:
            hit = [d for d in dtypes if d in self.dtypes]
            if not hit:
                return None
            found.append(f"element type {hit[0]}")
        if self.opsets is not None:
            if not self.opsets[0] <= opset <= self.opsets[1]:
                return None
            found.append(f"opset {opset}")
        return ", ".join(found)


_FLOAT_KERNEL = Unsupported(
    "float-kinds", "bfloat16 and 8-bit float element types",
    "the kernel computes in numpy's IEEE float16/float32/float64 (cast to float32 around it)",
    dtypes=EXOTIC_FLOATS)
_TRAINING = "zcspec compiles inference graphs"

UNSUPPORTED: dict[str, tuple[Unsupported, ...]] = {
    ANY_OP: (
        Unsupported("sub-byte", "sub-byte element types",
                    "they are stored packed, 2 to 4 elements to a byte, and only conversion, data movement and "
                    "the views take them: Cast the tensor to a whole-byte type first",
                    dtypes=SUB_BYTE, exempt=PACKED_OPS),
        Unsupported("non-tensor", "sequence, map and optional values", "the IR holds dense tensors only"),
        Unsupported("string", "string element types",
                    "a string has no fixed size, and the IR's tensors are fixed-size blocks of device memory"),
        Unsupported("omitted-operand", "an omitted optional operand before a given one",
                    "the IR's inputs and outputs are positional"),
        Unsupported("runtime-value", "a shape- or size-deciding operand known only at run time",
                    "the IR is static: shapes, memory sizes and the task list are fixed at compile time, so an "
                    "operand that decides them must be an initializer or a constant subgraph, or the graph "
                    "input it comes from frozen with --value NAME=... (values= in the API); operands that "
                    "decide only values (Clip's min/max, Pad's constant value, Resize's roi) may be run-time "
                    "inputs"),
    ),
    # The opset 1-6 broadcast/axis attributes are rewritten as numpy broadcasting (frontend/legacy_broadcast.py),
    # which checks the operands' shapes against that opset's rules first: it needs them known.
    **{op: (Unsupported("legacy-broadcast", "opset 1-6 broadcasting between operands of unknown shape",
                        "opsets 1-6 align B with A by rank (broadcast, axis) and need B's dims to match A's or be "
                        "1, which the import checks on the shapes ONNX infers before folding: fix the graph "
                        "inputs' dynamic dims with --shape, or re-export at opset 7 or later"),)
       for op in ("Add", "Sub", "Mul", "Div", "Pow", "Gemm", "And", "Or", "Equal", "Greater", "Less")},
    "BatchNormalization": (_FLOAT_KERNEL,),
    # detected by the front end (onnx_nodes._no_complex_attribute), only where a constant value is given:
    # a complex Pad padding with the default zero imports
    "Pad": (Unsupported("complex", "a complex constant value",
                        "the front end moves Pad's constant value into the node's attributes, which hold no complex "
                        "number; pad the real and the imaginary part apart"),),
    "Dropout": (
        Unsupported("training", "training mode with a non-zero ratio",
                    f"{_TRAINING}: it drops random elements, different ones on every run (training mode "
                    "with ratio 0 is the identity, and is supported)", attr="training_mode", values=(1,)),
    ),
    "Resize": (
        Unsupported("align-corners-fraction", "align_corners with scales that give a fractional output length",
                    "the output length is floor(input x scale), and ONNX's reference (its node tests' data) maps "
                    "output to input coordinates over input x scale while onnxruntime and the operator's text map "
                    "over the output length, so the two disagree on every such resize: give sizes instead of "
                    "scales, or a scale whose output length is whole"),
    ),
    **{op: (_FLOAT_KERNEL,) for op in ("Exp", "Sqrt", "Tanh", "Sigmoid", "LeakyRelu", "Softmax", "LRN", "Conv",
                                       "MaxPool", "AveragePool", "GlobalAveragePool", "Mean",
                                       "Log", "Reciprocal", "Floor", "GlobalMaxPool", "ConvTranspose", "Erf",
                                       "Gelu", "HardSigmoid", "HardSwish", "InstanceNormalization",
                                       "LayerNormalization", "GRU", "LSTM")},
}
for _op in ("BatchNormalization", "Dropout"):
    UNSUPPORTED[_op] += (Unsupported(
        "is-test", "training mode by is_test=0 (opsets 1-6)",
        f"{_TRAINING}: before opset 7, is_test=0 (its default) selects training mode; set is_test=1 or re-export at "
        "opset 7 or later", attr="is_test", values=(0,), default=0, opsets=(1, 6)),)


def _uninferred_opsets() -> dict[str, tuple[int, int]]:
    """Claimed ONNX op -> the opsets whose schema has no shape inference: ONNX cannot give the
    static shapes the IR needs (only first versions lack one, e.g. Relu-1 with its consumed_inputs).
    A schema defined by a function body (GreaterOrEqual-12: Or(Greater, Equal)) is inferred through
    its body, so it has one."""
    versions: dict[str, list] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx") and schema.name in ops.OPS:
            inferred = schema.has_type_and_shape_inference_function or schema.has_function
            versions.setdefault(schema.name, []).append((schema.since_version, inferred))
    out = {}
    for op, vs in versions.items():
        vs.sort()
        bad = [i for i, (_, inferred) in enumerate(vs) if not inferred]
        if bad and bad == list(range(len(bad))) and len(bad) < len(vs):   # a prefix of the versions
            out[op] = (vs[0][0], vs[len(bad)][0] - 1)
    return out


for _op, (_lo, _hi) in _uninferred_opsets().items():
    UNSUPPORTED[_op] = UNSUPPORTED.get(_op, ()) + (Unsupported(
        "opset", f"opsets {_lo}-{_hi}" if _lo != _hi else f"opset {_lo}",
        f"ONNX's schema for {_op}-{_lo} has no shape inference, and the IR needs every shape static; "
        f"re-export at opset {_hi + 1} or later", opsets=(_lo, _hi)),)


def _first_opsets() -> dict[str, int]:
    """Claimed ONNX op -> the first default-domain opset that defines it (Gelu: 20), for the ops ONNX defined
    after opset 1: a model of an earlier opset naming it names an op ONNX does not have there."""
    first: dict[str, int] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx") and schema.name in ops.OPS:
            first[schema.name] = min(first.get(schema.name, schema.since_version), schema.since_version)
    return {op: v for op, v in first.items() if v > 1}


for _op, _first in _first_opsets().items():
    UNSUPPORTED[_op] = UNSUPPORTED.get(_op, ()) + (Unsupported(
        "opset", f"opsets 1-{_first - 1}" if _first > 2 else "opset 1",
        f"ONNX defines {_op} from opset {_first} on; the model's opset has no such op: re-export at opset "
        f"{_first} or later", opsets=(1, _first - 1)),)


def entries(op_type: str) -> tuple[Unsupported, ...]:
    """The entries that apply to ``op_type``: its own, then the ``ANY_OP`` ones."""
    own = () if op_type == ANY_OP else UNSUPPORTED.get(op_type, ())
    return own + tuple(e for e in UNSUPPORTED[ANY_OP] if op_type not in e.exempt)


def find(op_type: str, key: str) -> Unsupported:
    """The entry ``key`` of ``op_type`` (its own or an ``ANY_OP`` one); KeyError when there is none."""
    for e in entries(op_type):
        if e.key == key:
            return e
    raise KeyError(f"no unsupported-feature entry {key!r} for op {op_type!r}")


def features(op_types: Iterable[str]) -> frozenset[str]:
    """Every feature a refusal of a node of one of ``op_types`` may name."""
    return frozenset(e.feature for op in (*op_types, ANY_OP) for e in UNSUPPORTED.get(op, ()))


def message(op_type: str, entry: Unsupported, detail: str) -> str:
    """The refusal's text: the op, the feature (verbatim), what the node has, and why."""
    return f"{op_type + ': ' if op_type else ''}{entry.feature} not supported ({detail}); {entry.why}"


def check(op_type: str, *, attributes: Mapping, dtypes: Iterable[str], opset: int,
          compute: bool = True) -> tuple[Unsupported, str] | None:
    """The first entry a node hits, with the detail to name (what the node has), or None.

    ``attributes`` are the node's IR attributes, ``dtypes`` its inputs' and outputs' element
    types, ``opset`` the model's default-domain opset; ``compute`` False (a view, no kernel)
    skips the ``ANY_OP`` dtype entries."""
    dtypes = tuple(dict.fromkeys(dtypes))
    for e in entries(op_type):
        if e.dtypes and not compute and e in UNSUPPORTED[ANY_OP]:
            continue
        detail = e.match(attributes, dtypes, opset)
        if detail is not None:
            return e, detail
    return None
