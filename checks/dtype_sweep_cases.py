"""The dtype sweep: every op of the op table, alone in a model, in each element type ONNX allows it.

What the front end accepts, the device must compute: a node in an element type no kernel takes must be
refused at import, naming the node, not compiled into a model whose run fails. Which types a kernel
takes is impl's own knowledge (impl/compiler/op_limits.py lists the refusals); the sweep does not ask
it (a table the front end reads cannot judge the front end). It observes instead: for each ONNX op of
the op table and each element type ONNX's schema allows for one of its type parameters
(``onnx.defs.get_schema(op).type_constraints``), named and built from ONNX's own type table
(``TensorProto.DataType``, ``onnx.helper.tensor_dtype_to_np_dtype``; never impl's, so a type impl's
table lost is still swept and its refusals show), a one-node model (``sweep_cases()``), which verify
must find either

- refused at import with a BadInput naming the node and the element type (``check_refusal``), and
  recorded as refused (checks/conformance/dtype_refusals.json, ``refusal_record``: a refusal the record
  does not list is a regression of the front end, a listed one that imports a stale record), or
- imported, and run through both runtimes against onnxruntime on the same file (onnx.reference on the
  imported graph where onnxruntime cannot run it: the execution scenario every ONNX file of verify
  gets, checks/execution/judge.py), with no call failing, no crash and no claim violated. A model
  that imports and then fails on the device is the front end accepting what the device cannot compute.

How a model is built. The node is that of an ONNX node test of the op (checks/conformance/cases.py;
``templates()``): one node of the default domain whose inputs are all non-empty numeric arrays,
preferring a float32 first input, inputs of float32/int64/bool only, a case not ``_expanded``, then
the fewest input elements (its attributes, shapes and constant operands are ONNX's own, so valid). The
node's first input (the data: X, A, Where's condition) is the one graph input, verify feeds it random
values; every other input is an initializer holding the node test's values, converted to the swept type
where the parameter types it (so shape- and index-deciding operands stay the test's, an index type is
swept as a constant, as in a real model, and a divisor or an exponent stays one the test chose). The
outputs the parameter types are declared in the swept type (when it types no input, the attribute that
sets it is set too: Cast's ``to``, LayerNormalization's ``stash_type``), the others as the node test
declares them, shapes included. One model per (op, type parameter, element type), IR 4 at least.

Left out, and why:

- string and the non-tensor types (sequences, optionals) of a constraint: zcspec has no IR type for
  them (its front end refuses them; checks/frontend_cases.py has those refusals);
- the op table's ops without an ONNX schema (Data, NetOutput, the Hcom and Memcpy ops, Merge,
  PhonyConcat, Variable): no ONNX file holds them, so no import to judge;
- nothing else. A pair with no oracle (onnxruntime has no kernel for it, and onnx.reference cannot
  evaluate it either) is still run: it is judged on what needs no oracle (the call succeeds on both
  runtimes, v1 equals v2, every other execution claim) and its outputs are counted unjudged in
  verify's report, with the reason. Skipping it would skip exactly the exotic types whose kernels the
  sweep is for (onnxruntime computes no bfloat16 Erf, and zcspec's kernel cannot either).

``KNOWN`` lists the pairs that fail today, each with why (a gap in impl for its owner to close, or a
tolerance the oracle cannot meet): verify runs them and requires them to still fail; one that passes
is reported as a stale record, so the list shrinks as impl is fixed.
"""
from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from pathlib import Path

import attrs
import numpy as np
import onnx
from onnx import defs, helper, numpy_helper

from zcspec.checks.conformance.cases import node_cases
from zcspec.checks.errors import UsageError
from zcspec.checks.models import load_graph
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.compiler import ops

DEFAULT_DOMAINS = ("", "ai.onnx")
PLAIN = frozenset({"float32", "int64", "bool"})   # a template's inputs in these convert to any swept type
# The attribute that sets the type of an op's outputs a type parameter types when no input has it.
TYPE_ATTRIBUTES = {"Cast": "to", "LayerNormalization": "stash_type"}
# ONNX's spellings of a constraint's tensor types where zcspec names them otherwise.
ONNX_NAMES = {"float": "float32", "double": "float64"}
# zcspec's name of every tensor element type ONNX defines -> its ONNX type id (string has no IR type: left out).
ONNX_IDS: dict[str, int] = {ONNX_NAMES.get(name.lower(), name.lower()): value
                            for name, value in onnx.TensorProto.DataType.items() if name not in ("UNDEFINED", "STRING")}
# The front end's refusals of sweep models, reviewed like source: regenerate with ``zcspec conformance --sweep-record``.
REFUSALS = Path(__file__).with_name("conformance") / "dtype_refusals.json"

# (op, type parameter, element type) -> why it fails today (see the module doc).
KNOWN: dict[tuple[str, str, str], str] = {}
# (HardSwish and Softmax in float16 were here: onnxruntime's float16 kernels round by one unit otherwise than
# zcspec's; EXEC-ORACLE's tolerance is now two units of an output's own precision where that is coarser.)


@attrs.frozen(eq=False)
class SweepCase:
    """``op`` in element type ``dtype`` for its type parameter ``param``, built from node test ``template``."""

    op: str
    param: str
    dtype: str
    template: str
    model: onnx.ModelProto

    @property
    def node(self) -> str:
        return self.model.graph.node[0].name

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.param, self.dtype)

    @property
    def label(self) -> str:
        return f"dtype sweep {self.op} {self.param}={self.dtype}"


def swept_ops() -> tuple[str, ...]:
    """The op table's ops an ONNX file can hold (those with a default-domain schema)."""
    return tuple(sorted(op for op in ops.OPS if defs.has(op, "")))


@functools.lru_cache(maxsize=1)
def templates() -> dict:
    """Op -> the node test case its models are built from (see the module doc)."""
    best: dict = {}
    for case in node_cases():
        nodes = case.model.graph.node
        if len(nodes) != 1 or nodes[0].domain not in DEFAULT_DOMAINS:
            continue
        if not all(isinstance(a, np.ndarray) and a.size and a.dtype.kind in "biufc" for a in case.inputs):
            continue
        rank = (case.inputs[0].dtype != np.float32, any(a.dtype.name not in PLAIN for a in case.inputs),
                "_expanded" in case.name, sum(a.size for a in case.inputs), case.name)
        op = nodes[0].op_type
        if op not in best or rank < best[op][0]:
            best[op] = (rank, case)
    return {op: case for op, (_, case) in best.items()}


def untemplated() -> tuple[str, ...]:
    """Ops of ``swept_ops()`` without a node test to build from (none today: a test holds it so)."""
    return tuple(op for op in swept_ops() if op not in templates())


def _formal(params, i: int) -> str | None:
    """The type string of formal parameter ``i`` (the last one repeats: a variadic one)."""
    return params[min(i, len(params) - 1)].type_str if params else None


def _opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS)


def allowed(constraint) -> tuple[str, ...]:
    """zcspec's names of the tensor element types a type constraint allows (string, sequences,
    optionals left out: see the module doc)."""
    out = []
    for text in constraint.allowed_type_strs:
        if text.startswith("tensor(") and text.endswith(")"):
            name = ONNX_NAMES.get(text[7:-1], text[7:-1])
            if name in ONNX_IDS:
                out.append(name)
    return tuple(out)


def sweep_cases() -> tuple[SweepCase, ...]:
    """One model per (op, type parameter, allowed element type), ops in name order."""
    out = []
    found = templates()
    for op in swept_ops():
        case = found.get(op)
        if case is None:
            continue
        schema = defs.get_schema(op, _opset(case.model), "")
        for constraint in schema.type_constraints:
            for dtype in allowed(constraint):
                out.append(SweepCase(op, constraint.type_param_str, dtype, case.name,
                                     _model(case, schema, constraint.type_param_str, dtype)))
    return tuple(out)


def _model(case, schema, param: str, dtype: str) -> onnx.ModelProto:
    """``case``'s node with ``param`` bound to ``dtype`` (see the module doc)."""
    node = case.model.graph.node[0]
    typed_in = [i for i, name in enumerate(node.input) if name and _formal(schema.inputs, i) == param]
    typed_out = [i for i, name in enumerate(node.output) if name and _formal(schema.outputs, i) == param]
    onnx_type = ONNX_IDS[dtype]
    np_type = helper.tensor_dtype_to_np_dtype(onnx_type)
    arrays = dict(zip(case.input_names, case.inputs))
    inputs, weights = [], []
    for i, name in enumerate(node.input):
        if not name:
            continue
        with np.errstate(invalid="ignore", over="ignore"):   # a negative float to an unsigned type wraps: fine
            array = arrays[name].astype(np_type) if i in typed_in else arrays[name]
        if i == 0:
            fed = onnx_type if i in typed_in else helper.np_dtype_to_tensor_dtype(array.dtype)
            inputs.append(helper.make_tensor_value_info(name, fed, array.shape))
        else:
            weights.append(numpy_helper.from_array(array, name))
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if not typed_in and node.op_type in TYPE_ATTRIBUTES:   # the output's type is an attribute's
        attributes[TYPE_ATTRIBUTES[node.op_type]] = onnx_type
    name = f"sweep_{node.op_type}_{param}_{dtype}"
    declared = {o.name: o for o in case.model.graph.output}
    outputs = []
    for i, output in enumerate(node.output):
        if output:
            outputs.append(onnx.ValueInfoProto())
            outputs[-1].CopyFrom(declared[output])   # the node test's shape: no type changes one
            if i in typed_out:
                outputs[-1].type.tensor_type.elem_type = onnx_type
    graph = helper.make_graph([helper.make_node(node.op_type, list(node.input), list(node.output), name=name,
                                                **attributes)], name, inputs, outputs, weights)
    # IR 4 on: initializers need not be graph inputs (an IR 3 node test's would all be fed)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", _opset(case.model))],
                             ir_version=max(case.model.ir_version, 4))


def saved(case: SweepCase, folder: str) -> str:
    """``case``'s model written into ``folder`` as an ONNX file (verify imports it from there): its path."""
    path = os.path.join(folder, f"{case.node}.onnx")
    onnx.save(case.model, path)
    return path


def refused_at_import(cases) -> list[str]:
    """The node names of ``cases`` whose model the front end refuses (a BadInput), as verify imports them."""
    out = []
    with tempfile.TemporaryDirectory(prefix="zcspec-dtype-sweep-") as folder:
        for case in cases:
            try:
                load_graph(saved(case, folder))
            except BadInput:
                out.append(case.node)
    return out


def render_refusals(refused) -> str:
    """The refusal record's text: the sweep models refused at import, by node name."""
    return json.dumps({"refused": sorted(refused)}, indent=1) + "\n"


def refusal_record(path: Path = REFUSALS) -> frozenset:
    """The node names of the sweep models the record expects refused at import."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the dtype sweep's refusal record: {e}", file=str(path)) from e
    names = data.get("refused") if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise UsageError('expected {"refused": [node name, ...]}', file=str(path))
    return frozenset(names)


def record_differences(refused, record) -> list[tuple[str, str]]:
    """(node, what differs) for every sweep model refused that the record expects to import, and every one
    the record expects refused that was not."""
    out = [(n, f"refused at import; {REFUSALS.name} expects it to import (if the refusal is intended, "
               "regenerate the record: zcspec conformance --sweep-record)") for n in sorted(set(refused) - record)]
    out += [(n, f"not refused; {REFUSALS.name} expects a refusal: the record is stale (zcspec conformance "
                "--sweep-record)") for n in sorted(record - set(refused))]
    return out


def check_refusal(case: SweepCase, error: BaseException) -> str | None:
    """What is wrong with ``error`` (a BadInput) as a refusal of ``case``: it must name the node and the
    element type (a refusal for anything else is no answer to whether the type is computed); None: fine."""
    text = str(error)
    rest = text.replace(case.node, "")   # the node's name (and its file's) spells the type too
    named = re.search(rf"\b{case.dtype}\b", rest) is not None
    missing = [what for what, shown in ((f"the node {case.node!r}", repr(case.node) in text),
                                        (f"the element type {case.dtype}", named)) if not shown]
    if missing:
        return f"refused without naming {' and '.join(missing)}: {type(error).__name__}: {text}"
    return None
