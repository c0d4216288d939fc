"""Input files: what a front end must refuse, judged from the file itself (applies to input files).

Each claim names a rule ONNX states for every model (its IR: a graph is acyclic, every name is written
once, every input a node reads is written; its operator schemas: which ops exist at an opset and how
many inputs each takes) or that a static graph needs (every dim fixed), finds where the file breaks it
from the observation's transcription of the file (spec/observables/input_file.py), and says the import
must not accept such a file: a front end that lets it through hands the compiler a graph the planner's
lifetimes, the task order or the kernels cannot be right for, and nothing downstream says why. The
schemas are read from the onnx package (``onnx.defs``), ONNX's own statement of them; the op types GE
adds for a graph JSON file from the spec's op facts (spec/op_facts.py ``GE_OP_TYPES``).
"""
from __future__ import annotations

import re
from typing import Iterator

import networkx as nx
from onnx import defs

from zcspec.spec import op_facts
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants.input_graph_json import FORMAT_DOC, Breach, format_breaches
from zcspec.spec.invariants.input_types import IMPORT_TYPES
from zcspec.spec.observables.input_file import InputFileObservation, InputNode

ONNX_IR = "onnx/docs/IR.md (Graphs: names in SSA form, nodes topologically sortable)"
ONNX_CHECKER = "onnx/checker.cc (check_graph, check_node: OpSchema::Verify)"
DEFAULT_DOMAINS = ("", "ai.onnx")
# The IR's views Flatten and Identity may carry their shape operand as a second input in a graph JSON
# file (docs/graph-format.md): one input more than ONNX's schema allows. The only deviation from ONNX's
# counts; an ONNX file is held to ONNX's.
GRAPH_JSON_EXTRA_INPUT = frozenset({"Flatten", "Identity"})


def _schema(obs: InputFileObservation, node: InputNode):
    """ONNX's schema of ``node`` at the file's opset (a graph JSON node: the latest), or None."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    if obs.format == "graph_json":
        return defs.get_schema(node.op_type) if defs.has(node.op_type) else None
    try:
        return defs.get_schema(node.op_type, obs.opset, "")
    except defs.SchemaError:
        return None


def arity_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    for n in obs.nodes:
        schema = _schema(obs, n)
        if schema is None:
            continue
        most = schema.max_input + (1 if obs.format == "graph_json" and n.op_type in GRAPH_JSON_EXTRA_INPUT else 0)
        if not schema.min_input <= len(n.inputs) <= most:
            yield Breach(f"node {n.name!r} ({n.op_type}) has {len(n.inputs)} inputs; ONNX's schema takes "
                         f"{schema.min_input} to {most}", (_label(n),))


def unknown_op_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    for n in obs.nodes:
        if obs.format == "graph_json":
            if not defs.has(n.op_type) and n.op_type not in op_facts.GE_OP_TYPES:
                yield Breach(f"node {n.name!r}: {n.op_type!r} is neither an ONNX op nor one of GE's", (_label(n),))
        elif n.domain not in DEFAULT_DOMAINS:
            yield Breach(f"node {n.name!r}: {n.op_type!r} is of domain {n.domain!r}, not ONNX's default", (_label(n),))
        elif _schema(obs, n) is None:
            yield Breach(f"node {n.name!r}: ONNX has no {n.op_type!r} at opset {obs.opset}", (_label(n),))


def _label(n: InputNode) -> str:
    """What a refusal can name a node by: its name, or its op type when the file gives it none (ONNX allows
    unnamed nodes; a front end names them after their op)."""
    return n.name or n.op_type


def cycle_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    writer = {t: k for k, n in enumerate(obs.nodes) for t in n.outputs if t}
    by_name = {n.name: k for k, n in enumerate(obs.nodes) if n.name}
    g = nx.DiGraph()
    g.add_nodes_from(range(len(obs.nodes)))
    for k, n in enumerate(obs.nodes):
        g.add_edges_from((writer[t], k) for t in n.inputs if t in writer)
        g.add_edges_from((by_name[c], k) for c in n.control_inputs if c in by_name)
    for scc in nx.strongly_connected_components(g):
        members = sorted(scc)
        if len(members) > 1 or g.has_edge(members[0], members[0]):
            labels = tuple(_label(obs.nodes[k]) for k in members)
            yield Breach(f"nodes {list(labels)} form a cycle", labels)


def dangling_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    written = set(obs.graph_inputs) | set(obs.constants) | {t for n in obs.nodes for t in n.outputs if t}
    names = {n.name for n in obs.nodes}
    for n in obs.nodes:
        for t in n.inputs:
            if t and t not in written:
                yield Breach(f"node {n.name!r} reads {t!r}, which nothing writes", (t,))
        for c in n.control_inputs:
            if c not in names:
                yield Breach(f"node {n.name!r} waits on {c!r}, which is not a node", (c,))
    for t in obs.graph_outputs:
        if t not in written:
            yield Breach(f"graph output {t!r} is written by nothing", (t,))


def one_writer_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    writers: dict[str, list[str]] = {}
    for n in obs.nodes:
        for t in n.outputs:
            if t:
                writers.setdefault(t, []).append(n.name)
    given = set(obs.graph_inputs) | set(obs.constants)
    for t, who in writers.items():
        if len(who) > 1:
            yield Breach(f"tensor {t!r} is written by nodes {who}", (t,))
        elif t in given:
            yield Breach(f"tensor {t!r} is written by node {who[0]!r} and given by the file too", (t,))
    seen: set[str] = set()
    for n in obs.nodes:
        if n.name and n.name in seen:
            yield Breach(f"two nodes are named {n.name!r}", (n.name,))
        seen.add(n.name)
    for what, name in obs.duplicates:
        yield Breach(f"{what} {name!r} is listed twice", (name,))


def static_shape_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    for t in obs.shaped:
        if t.name in obs.shapes_given:
            continue
        if t.dims is None:
            yield Breach(f"tensor {t.name!r} has no shape", (t.name,))
            continue
        bad = [d for d in t.dims if not isinstance(d, int) or isinstance(d, bool) or d < 0]
        if bad:
            yield Breach(f"tensor {t.name!r} has dims {list(t.dims)}, not all fixed: {bad}", (t.name,))


# ONNX's generator ops: each run draws new values (onnx/defs/generator/defs.cc; a seed attribute fixes only an
# implementation's own generator, which ONNX does not define).
RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli",
                        "Multinomial"})
DROPOUT_DEFAULT_RATIO = 0.5   # onnx/defs/nn/defs.cc (Dropout: ratio defaults to 0.5 in every version)


def _scalar(obs: InputFileObservation, tensor: str) -> float | None:
    """A constant operand's one value, or None when the file does not give it as a constant."""
    v = obs.values.get(tensor)
    return v[0] if v is not None and len(v) == 1 else None


def _dropout_random(obs: InputFileObservation, n: InputNode) -> str | None:
    """Why ONNX's Dropout ``n`` drops random elements at this opset (or may: a mode or ratio known only at
    run time), or None when it is the identity. Opsets 1-6: attribute is_test, 0 by default, selects
    training mode; 7-11: no training mode; from 12: input 2 training_mode (false when omitted) and input 1
    the ratio."""
    if obs.opset and obs.opset <= 6:
        if n.attributes.get("is_test", 0) != 0:
            return None
        ratio = n.attributes.get("ratio", DROPOUT_DEFAULT_RATIO)
        return None if ratio == 0 else f"is_test=0 (training mode) and ratio={ratio}"
    if obs.opset and obs.opset < 12:
        return None
    ratio_in, mode_in = (list(n.inputs[1:3]) + ["", ""])[:2]
    if not mode_in:
        return None
    mode = _scalar(obs, mode_in)
    if mode is None:
        return f"training_mode {mode_in!r} is known only at run time"
    if mode == 0:
        return None
    ratio = _scalar(obs, ratio_in) if ratio_in else DROPOUT_DEFAULT_RATIO
    if ratio is None:
        return f"training_mode is true and ratio {ratio_in!r} is known only at run time"
    return None if ratio == 0 else f"training_mode is true and ratio={ratio:g}"


def random_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    if obs.format != "onnx":
        return
    for n in obs.nodes:
        if n.domain not in DEFAULT_DOMAINS:
            continue
        if n.op_type in RANDOM_OPS:
            yield Breach(f"node {_label(n)!r} ({n.op_type}) draws random values", (_label(n),))
        elif n.op_type == "Dropout" and (why := _dropout_random(obs, n)):
            yield Breach(f"node {_label(n)!r} (Dropout) drops random elements: {why}", (_label(n),))


def _refused_when(breaches):
    """A predicate: a file with one of ``breaches`` is not accepted."""
    def predicate(obs: InputFileObservation):
        if not obs.outcome.accepted:
            return
        for b in breaches(obs):
            yield violation(f"input file {obs.file}", f"the import accepted the file although {b.where}",
                            names=list(b.names))
    return predicate


def _exercised(breaches):
    return lambda obs: next(iter(breaches(obs)), None) is not None


def _rule(breaches, **text) -> Invariant:
    """A claim that a file with one of ``breaches`` is refused; ``text`` its id, title, statement,
    rationale and GE source."""
    return Invariant(**text, applies_to="input_file", concern="input_file", predicate=_refused_when(breaches),
                     precondition=_exercised(breaches))


ARITY = _rule(
    arity_breaches,
    id="INPUT-ARITY-REFUSED",
    title="A node with an input count its op does not take is refused",
    statement="An input file holding a node of an ONNX op whose number of inputs (omitted optional ones counted by "
              "position) lies outside what ONNX's schema of that op allows at the file's opset (a graph JSON file: the "
              "latest schema; its views Flatten and Identity may carry one input more, their shape operand) is not "
              "accepted by the import.",
    rationale="The planner gives a node's inputs lifetimes and the kernel reads them by position: a missing input is a "
              "read of nothing, an extra one a tensor kept alive that nothing uses, and the op table a front end checks "
              "against is its own reading of the schema. ONNX's checker refuses such a node.",
    ge_source=ONNX_CHECKER,
)

UNKNOWN_OP = _rule(
    unknown_op_breaches,
    id="INPUT-UNKNOWN-OP-REFUSED",
    title="An op outside ONNX's default domain, or unknown at the opset, is refused",
    statement="An ONNX model holding a node of a domain other than ONNX's default, or of an op ONNX does not define at "
              "the model's opset, is not accepted by the import; nor a graph JSON file holding an op type that is "
              "neither ONNX's nor one of GE's own (Data, NetOutput, Variable, Const, Merge, the copies, PhonyConcat, "
              "the HCCL collectives).",
    rationale="An op of another domain (ONNX-ML, onnxruntime's contrib ops) has the same name as an ONNX op with other "
              "semantics, or none the device knows; an op named at an opset before ONNX defined it is a file written "
              "for another opset. Taken as the ONNX op of that name, it computes something else, silently.",
    ge_source=ONNX_CHECKER + "; onnx/defs/schema.h (OpSchemaRegistry::Schema(op, max_inclusive_version, domain))",
)

CYCLE = _rule(
    cycle_breaches,
    id="INPUT-CYCLE-REFUSED",
    title="A graph with a cycle is refused",
    statement="An input file whose nodes' data edges (a tensor's writer before each of its readers) and control edges "
              "close a cycle is not accepted by the import.",
    rationale="A cycle has no execution order: the planner's lifetimes (first and last use by position) and the "
              "task order of the model file have no meaning on it, and a front end that orders it anyway drops or "
              "reorders an edge. ONNX's IR requires a topologically sortable graph.",
    ge_source=ONNX_IR,
)

DANGLING = _rule(
    dangling_breaches,
    id="INPUT-DANGLING-REFUSED",
    title="A read of a tensor nothing writes is refused",
    statement="An input file in which a node reads a tensor, or the graph outputs one, that no node writes and that "
              "is neither a graph input nor a constant, or a node waits on a node the graph lacks, is not accepted by "
              "the import.",
    rationale="The planner would give such a tensor no memory, or memory nothing fills: the kernel reads whatever "
              "the block held. ONNX's IR requires every input of a node to be a graph input, an initializer or "
              "another node's output.",
    ge_source=ONNX_IR,
)

ONE_WRITER = _rule(
    one_writer_breaches,
    id="INPUT-ONE-WRITER-REFUSED",
    title="A name written twice is refused",
    statement="An input file in which a tensor is written by two nodes, or written by a node while the file also gives "
              "it (a graph input, a constant), or two nodes share a name, or one list (graph inputs, tensor "
              "descriptions, weights) names something twice, is not accepted by the import.",
    rationale="Names are how the planner, the model file and the runtimes tell tensors and tasks apart: a tensor with "
              "two writers gets one lifetime for two values, one overwriting the other, and a duplicate name makes "
              "one of two things unreachable. ONNX's IR keeps names in static single assignment form.",
    ge_source=ONNX_IR,
)

STATIC_SHAPE = _rule(
    static_shape_breaches,
    id="INPUT-STATIC-SHAPE-REFUSED",
    title="A tensor whose dims the file does not fix is refused",
    statement="An input file giving a graph input (an ONNX model's; in a graph JSON file, any tensor) no shape, or a "
              "dim that is not a non-negative integer (a symbolic name, no value, -1, null, a boolean), without the "
              "caller fixing that input's shape, is not accepted by the import.",
    rationale="A static plan needs every size before the first execution: GE's static models fix every dim at build "
              "(a dynamic one goes to the dynamic-shape path, which this project does not model). Planned with a "
              "guessed size, a tensor is smaller than what the kernel writes into it.",
    ge_source="graph_metadef/graph/utils/graph_utils.cc (GraphUtils::IsUnknownShapeGraph: a graph with an "
              "unknown dim is executed on the dynamic-shape path, not planned statically)",
)

FORMAT = _rule(
    format_breaches,
    id="INPUT-FORMAT-REFUSED",
    title="A graph JSON file that breaks its format is refused",
    statement="A graph JSON file that is not the document " + FORMAT_DOC + " describes is not accepted by the "
              "import: a text that is not JSON, another \"format\" or a version other than 1, 2 or 3; a node, "
              "tensor description or weight without one of its keys or with one of the wrong JSON type (a "
              "version-2 or 3 node without its control inputs; a set size before version 3, or one that is not a "
              "whole number of at least one byte and of the shape's raw bytes); an attribute value in no form the "
              "format has (an untagged list, null, a float tag holding no float, a tuple in a tuple); weight data "
              "that is not base64 or not its description's size (one element for a splat weight); a graph without "
              "exactly one NetOutput, with Data indexes other than 0..n-1, a node output or weight without a "
              "description, or a control input listed twice; a planning attribute of the wrong type or range "
              "(_reuse_input naming no input, _inplace_ability that are no index pairs, continuous_output or "
              "need_gentask_atomic that are no booleans, atomic_input_index that is no tuple of indexes); a "
              "Merge without one distinct label per input, with a branch label of its own, or with an input "
              "produced in another branch than its label's or shaped unlike its output.",
    rationale="The format is what a user writes by hand for `zcspec plan`, and what counterexample files carry: "
              "a reader that takes a malformed field as something else (a missing key as its default, a number "
              "as a flag, short weight data as the whole tensor) plans a graph nobody wrote. The rules are the "
              "format's reference, checked on the file's own text, never asked of the reader.",
    ge_source="zcspec's own format (" + FORMAT_DOC + "); the graph rules are GE's for a graph it plans: "
              "compiler/graph/build/memory/block_mem_assigner.cc (every output has a tensor description; "
              "ATTR_NAME_CONTINUOUS_OUTPUT and the in-place attributes as its planner reads them), one "
              "NetOutput and Data indexes 0..n-1 as GE's graph builder requires, the Merge of a dynamic batch "
              "joining one branch per label",
)

# The refusal docs/graph-format.md names for a file the reader cannot read ("Reading the file").
UNREADABLE = "GraphFormatError"


def _unreadable(obs: InputFileObservation) -> bool:
    return (obs.format == "graph_json" and obs.document is not None and not obs.outcome.accepted
            and UNREADABLE in obs.outcome.error)


def _format_refusal_justified(obs: InputFileObservation):
    if _unreadable(obs) and next(format_breaches(obs), None) is None:
        yield violation(f"file {obs.file!r}", f"breaks none of the rules of {FORMAT_DOC}, yet the import refused it "
                        f"as unreadable ({UNREADABLE}): {obs.outcome.message[:200]}", error=obs.outcome.error[0])


FORMAT_REFUSAL_JUSTIFIED = Invariant(
    id="INPUT-FORMAT-REFUSAL-JUSTIFIED",
    title="A graph JSON file is refused as unreadable only when it breaks its format",
    statement="A graph JSON file the import refuses as unreadable (GraphFormatError, the refusal " + FORMAT_DOC
              + " names for a file the reader cannot read) breaks at least one of the format's rules that "
              "INPUT-FORMAT-REFUSED checks.",
    rationale="INPUT-FORMAT-REFUSED says what must be refused; this is the other direction for the reader: a "
              "reader that calls a well-formed file unreadable (a version it knows taken for one it does not, a "
              "key of the right type taken for a wrong one) sends its user to mend a field that is right, and "
              "hides whatever the file is really refused for. The rules are checked on the file's own text.",
    ge_source="zcspec's own format (" + FORMAT_DOC + ": \"What is refused\", reading the file)",
    applies_to="input_file", concern="input_file", predicate=_format_refusal_justified, precondition=_unreadable,
)

RANDOM = _rule(
    random_breaches,
    id="INPUT-RANDOM-REFUSED",
    title="A node that computes random values is refused",
    statement="An ONNX model holding one of ONNX's generator ops (RandomNormal, RandomUniform, their Like forms, "
              "Bernoulli, Multinomial), or a Dropout that drops random elements (opsets 1-6: is_test 0, its "
              "default, with a ratio other than 0; from opset 12: a training_mode input that is true or known only "
              "at run time, with a ratio, 0.5 by default, other than 0 or known only at run time), is not accepted "
              "by the import.",
    rationale="A compiled static model computes the same outputs from the same inputs on every run: ONNX defines "
              "these nodes to draw new values on each one, so no compiled program is right for them, and a front "
              "end that imports one (as the identity, or a fixed draw) hands the compiler a model that silently "
              "computes something else; no output oracle can tell, its reference draws at random too. A training "
              "mode or ratio given only at run time may make the Dropout random, which the compiler cannot know.",
    ge_source="onnx/defs/generator/defs.cc (RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, "
              "Bernoulli, Multinomial); onnx/defs/nn/defs.cc and nn/old.cc (Dropout: is_test up to opset 6, "
              "training_mode and ratio inputs from opset 12)",
)

BREACHES = (arity_breaches, unknown_op_breaches, cycle_breaches, dangling_breaches, one_writer_breaches,
            static_shape_breaches, format_breaches, random_breaches)


def _named(obs: InputFileObservation) -> Iterator:
    if obs.outcome.accepted:
        return
    found = [b for rule in BREACHES for b in rule(obs) if b.names]   # a text that is not JSON names nothing
    if found and not any(_names(obs.outcome.message, n) for b in found for n in b.names if n):
        yield violation(f"input file {obs.file}", "the refusal names none of the file's faults ("
                        + "; ".join(b.where for b in found[:3]) + (", ..." if len(found) > 3 else "")
                        + f"): {' '.join(obs.outcome.message.split())[:300]}",
                        faults=[b.where for b in found])


def _names(message: str, name: str) -> bool:
    """Whether ``message`` names ``name`` as a word of its own (quoted or not)."""
    return re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", message) is not None


REFUSAL_NAMED = Invariant(
    id="INPUT-REFUSAL-NAMES-FAULT",
    title="A refusal of a faulty file names a fault",
    statement="When the import refuses an input file that breaks one of the rules above, its message names "
              "a node or tensor of one of the faults the file holds (the node of a wrong input count or an "
              "unknown op, a node on the cycle, the tensor nothing writes, the name written twice, the tensor "
              "whose dims are not fixed).",
    rationale="A user can mend a file only where the refusal points; a refusal that names something else "
              "(or nothing) sends them to the wrong node, and usually means the front end tripped over "
              "something other than the fault, by luck.",
    ge_source=ONNX_CHECKER, applies_to="input_file", concern="input_file", predicate=_named,
    precondition=lambda obs: not obs.outcome.accepted and any(b.names for r in BREACHES for b in r(obs)),
)

INVARIANTS = (ARITY, UNKNOWN_OP, CYCLE, DANGLING, ONE_WRITER, STATIC_SHAPE, FORMAT, FORMAT_REFUSAL_JUSTIFIED, RANDOM,
              REFUSAL_NAMED, IMPORT_TYPES)
