"""GE's own memory-assignment unit tests, rebuilt as zcspec graphs: the graph builder the cases share.

GE's tests (``mirror-cann/ge`` ``tests/ge/ut/ge/graph/build/*_unittest.cc``) build
graphs of untyped ops ("some") whose tensor sizes they set directly
(``TensorUtils::SetSize``), then read offsets and memory sizes. :class:`GeGraph` is written the way a
GE test is written (nodes in ``AddNode`` order, edges in ``AddEdge`` order, control edges, stream ids, output and
workspace sizes) and turns it into what zcspec plans:

- a GE size becomes the tensor's set size (``TensorDesc.size``, GE's ``TensorUtils::SetSize``), which
  the planner takes as is; block rounding (512) stays GE's. ``CreateOpWithWsSize`` (:func:`some_op`,
  or ``node(..., fixture=n)``) builds its output on a 1x1x16x8 float (512 B), so a NoPadding continuous
  input advances by those 512 B while its block is sized by the set size, as in GE (graph_mem_assigner.cc
  ``GetMemorySize``). Other outputs (the graph-DSL tests', whose sizes are their shapes' bytes, and the
  empty ``GeTensorDesc`` s a test adds) are ``uint8`` tensors of their size. :data:`GE_SIZES`
  (``GeGraph.OPTIONS``: no padding, no 32-byte rounding) sizes what has no set size (a size of 0);
- a GE op becomes the zcspec op type the test names (``Sum`` for a plain op with any
  number of inputs, ``Max`` for one whose output is a ref of input 0, ``Split`` for
  several outputs, ``PhonyConcat``/``HcomAllReduce`` for NoPadding/padding continuous
  inputs); an op that needs an input but has none connected reads a dummy weight,
  which takes no feature-map memory (GE leaves the input anchor unconnected);
- a graph without a NetOutput gets one reading a dummy weight (zcspec requires one;
  it adds no planned tensor) as the last step;
- the execution order is GE's default DFS topological sort
  (``ComputeGraphImpl::DFSTopologicalSorting`` with ``SortNodes``,
  ``graph_metadef/graph/normal_graph/compute_graph.cc``), computed from the edges in
  the order the GE test added them. Control edges become the nodes' ``control_inputs``:
  they shape that order and, between streams, order the streams as a data edge does.

The cases of ``mem_assigner_unittest.cc`` (``some_op``: GE's ``CreateOpWithWsSize``) compare GE's expected
number or fact with zcspec's plan: ``memory_size`` is GE's HBM total after ``MemoryAssigner::AssignMemory``
(feature map, atomic and zero-copy memory); a case that reads ``HybridMemAssigner::GetMemOffsets``
compares the feature-map region (GE's planner score). A recorded deviation names GE's value, zcspec's,
and the GE function that decides it.
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc, Weight
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.validate import validate
from zcspec.spec.check import check
from zcspec.spec.registry import all_invariants

GE_SIZES = PlanOptions(size_align=1, size_padding=0)
_DUMMY = "ge_unconnected"  # the weight standing in for GE's unconnected input anchors
# CreateOpWithWsSize's output tensor: shape {1, 1, 16, 8}, FORMAT_NCHW, DT_FLOAT (512 B of shape).
FIXTURE_SHAPE = (1, 1, 16, 8)
# The spec's claims a plan of a GE test graph must satisfy: all of them. GE's tests set each size directly
# (TensorUtils::SetSize), every tensor here carries it as its set size, and LAYOUT-TENSOR-SIZE holds a
# tensor with a set size to that size.
JUDGED = all_invariants()


class PlanCheckFailed(AssertionError):
    """zcspec's plan of a GE graph breaks one of the spec's claims (:data:`JUDGED`): a planner bug, not a
    difference from GE. ``violations``: the claims' violations, which verify reports as findings."""

    def __init__(self, message: str, violations: tuple = ()):
        super().__init__(message)
        self.violations = tuple(violations)


class GeGraph:
    """One GE unit-test graph. ``node`` adds a node, ``edge``/``ctrl`` add edges, ``plan`` plans it."""

    OPTIONS = GE_SIZES

    def __init__(self, name: str, *, dsl: bool = False):
        """``dsl``: the GE test builds the graph with its graph DSL (``DEF_GRAPH``/``CHAIN``), whose
        ``easy_graph::Graph`` keeps nodes in a ``std::map`` and edges in a ``std::set``: GE then adds
        nodes in name order and edges sorted by (source, port, destination, port)."""
        self.name = name
        self.dsl = dsl
        self._nodes: dict[str, dict] = {}
        self._edges: list[tuple[str, int, str, int]] = []
        self._ctrl: list[tuple[str, str]] = []
        self._ports: dict[str, list[int]] = {}

    def node(self, name: str, op: str = "Sum", outs=(1024,), ws=(), stream: int = 0, fixture: int = 0,
             **node_attrs) -> "GeGraph":
        """A node with output sizes ``outs`` (bytes, set sizes), workspace sizes ``ws`` (zeros dropped, as GE
        does) and zcspec node attributes ``node_attrs`` (``_reuse_input``...). ``fixture``: how many leading
        outputs have the fixture's shape (:data:`FIXTURE_SHAPE`: ``CreateOpWithWsSize``'s output and the
        copies of it a test adds with ``AddOutputDesc(GetOutputDesc(0))``); the others are ``uint8``
        tensors of their sizes."""
        self._nodes[name] = {"op": op, "outs": tuple(outs), "ws": tuple(w for w in ws if w != 0),
                             "stream": stream, "fixture": fixture, "attrs": node_attrs}
        return self

    def edge(self, src: str, out: int, dst: str, into: int) -> "GeGraph":
        self._edges.append((src, out, dst, into))
        return self

    def link(self, src: str, dst: str, out: int | None = None, into: int | None = None) -> "GeGraph":
        """One data edge of the GE DSL (``easy_graph`` ``GraphBuilder::BuildEdge``): an unspecified port
        takes the node's next free port, on the source side too (so a fan-out written as two chains
        uses two output anchors); a given port below the next free one is used as is."""
        def port(node: str, side: int, given: int | None) -> int:
            reserved = self._ports.setdefault(node, [0, 0])
            if given is None:
                reserved[side] += 1
                return reserved[side] - 1
            if given >= reserved[side]:
                reserved[side] = given + 1
            return given
        return self.edge(src, port(src, 1, out), dst, port(dst, 0, into))

    def chain(self, *names: str) -> "GeGraph":
        """``CHAIN(NODE(a)->NODE(b)->...)`` of the GE DSL: a :meth:`link` between each neighbour pair."""
        for a, b in zip(names, names[1:]):
            self.link(a, b)
        return self

    def ctrl(self, src: str, dst: str) -> "GeGraph":
        self._ctrl.append((src, dst))
        return self

    def _ge_lists(self):
        """Nodes, data edges and control edges in the order GE's graph holds them."""
        if not self.dsl:
            return list(self._nodes), self._edges, self._ctrl
        return sorted(self._nodes), sorted(set(self._edges)), sorted(set(self._ctrl))

    def ge_order(self) -> tuple[str, ...]:
        """GE's default (DFS) topological order of the nodes."""
        names, edges, ctrls = self._ge_lists()
        indegree = {n: 0 for n in names}
        for _, _, dst, _ in edges:
            indegree[dst] += 1
        for _, dst in ctrls:
            indegree[dst] += 1
        # SortNodes: sources that are not Data go to the front (so the first added is popped first),
        # Data sources are inserted after them, also reversed; the vector is then pushed in order.
        stack, specials = [], 0
        for n in names:
            if indegree[n]:
                continue
            if self._nodes[n]["op"] != "Data":
                stack.insert(0, n)
                specials += 1
            else:
                stack.insert(specials, n)
        order = []
        while stack:
            n = stack.pop()
            order.append(n)
            outs = sorted({e[1] for e in edges if e[0] == n})
            for k in outs:  # each out anchor's freed consumers are pushed together, later anchors on top
                freed = []
                for src, out, dst, _ in edges:
                    if src == n and out == k:
                        indegree[dst] -= 1
                        if indegree[dst] == 0:
                            freed.append(dst)
                stack.extend(freed)
            freed = []
            for src, dst in ctrls:
                if src == n:
                    indegree[dst] -= 1
                    if indegree[dst] == 0:
                        freed.append(dst)
            stack.extend(freed)
        if len(order) != len(self._nodes):
            raise ValueError(f"GE graph {self.name!r} has a cycle")
        return tuple(order)

    def build(self) -> Graph:
        for src, out, dst, _ in self._edges:
            if out >= len(self._nodes[src]["outs"]):
                raise ValueError(f"GE graph {self.name!r}: edge {src}:{out} -> {dst}: {src} has fewer outputs")
        nodes, descs, need_dummy = [], {}, False
        data_index = 0
        for name, spec in self._nodes.items():
            ins = sorted((e for e in self._edges if e[2] == name), key=lambda e: e[3])
            inputs = [f"{src}:{out}" for src, out, _, _ in ins]
            outputs = [f"{name}:{k}" for k in range(len(spec["outs"]))] if spec["op"] != "NetOutput" else []
            node_attrs = dict(spec["attrs"])
            if spec["ws"]:
                node_attrs["_workspace_bytes"] = spec["ws"]
            if spec["op"] == "Data":
                node_attrs["index"] = data_index
                data_index += 1
            elif not inputs and ops.info(spec["op"]).inputs[0] > 0:
                inputs, need_dummy = [_DUMMY], True
            for k, (t, size) in enumerate(zip(outputs, spec["outs"])):
                descs[t] = _desc(t, size, k < spec["fixture"])
            ctrl = tuple(dict.fromkeys(src for src, dst in self._ctrl if dst == name))
            nodes.append(Node(name, spec["op"], inputs, outputs, node_attrs, spec["stream"], ctrl))
        if not any(n.op_type == "NetOutput" for n in nodes):
            nodes.append(Node("ge_netoutput", "NetOutput", (_DUMMY,), ()))
            need_dummy = True
        weights = []
        if need_dummy:
            descs[_DUMMY] = TensorDesc(_DUMMY, (1,), "uint8")
            weights.append(Weight.from_array(_DUMMY, np.zeros((1,), np.uint8)))
        return validate(Graph(self.name, nodes, descs.values(), weights))

    def order(self) -> tuple[str, ...]:
        """GE's order, with the NetOutput zcspec needs last when the GE graph has none."""
        extra = () if any(s["op"] == "NetOutput" for s in self._nodes.values()) else ("ge_netoutput",)
        return self.ge_order() + extra

    def plan(self, order=None, **options):
        """The zcspec plan of this graph in GE's order (or ``order``), with :data:`GE_SIZES` changed by
        ``options`` (PlanOptions fields); it must satisfy the spec's claims (:data:`JUDGED`, else
        PlanCheckFailed), so that a case never compares GE's number with that of a broken plan."""
        graph = self.build()
        plan = plan_memory(graph, attrs.evolve(GE_SIZES, **options), order=order or self.order())
        report = check(observe_plan(graph, plan), invariants=JUDGED)
        if not report.ok:
            raise PlanCheckFailed(f"zcspec's plan of GE graph {self.name!r} breaks the spec: "
                                  + "; ".join(str(v) for v in report.violations), report.violations)
        return plan


def _desc(name: str, size: int, fixture: bool) -> TensorDesc:
    """Output ``name`` with GE's set size ``size``: on the fixture's float32 shape, or else a ``uint8``
    tensor of that many bytes (a size of 0, GE's unset size, sets nothing)."""
    if fixture:
        return TensorDesc(name, FIXTURE_SHAPE, "float32", "NCHW", size=size)
    return TensorDesc(name, (size,), "uint8", size=size or None)


def _span(plan, name: str):
    """(region, start, end) as GE's CheckReuse measures a tensor: its block's head and size when the
    tensor starts the block, else its own offset and 512-rounded size (a non-first continuous input)."""
    t = plan.tensor(name)
    block = next(b for b in plan.blocks if b.id == t.block)
    if block.offset == t.offset:
        return t.region, block.offset, block.offset + block.size
    return t.region, t.offset, t.offset + t.aligned_size


def reuses(plan, *names: str, reuse: bool = True) -> bool:
    """GE's ``CheckReuse``: every tensor lies inside the memory of the one that starts first (ties: the
    larger); with ``reuse=False`` none of the others does."""
    spans = sorted((_span(plan, n) for n in names), key=lambda s: (s[0], s[1], -s[2]))
    head = spans[0]
    inside = [s[0] == head[0] and s[2] <= head[2] for s in spans[1:]]
    return all(inside) if reuse else not any(inside)


def disjoint(plan, a: str, b: str) -> bool:
    """GE's ``CheckNotReuse``: the two tensors' bytes (their own sizes) do not overlap."""
    ta, tb = plan.tensor(a), plan.tensor(b)
    return ta.region != tb.region or ta.offset + ta.size <= tb.offset or tb.offset + tb.size <= ta.offset


def some_op(g: GeGraph, name, size=2048, ws=1024, stream=1, op="Sum", **attrs_):
    """``CreateOpWithWsSize(name, ws, "some", size)`` of GE's ``mem_assigner_unittest.cc`` fixture: one output
    on the fixture's 1x1x16x8 float with set size ``size`` (or several outputs: the others are the empty
    descs the test adds, ``uint8`` of their sizes here), one workspace, a stream."""
    g.node(name, op=op, outs=size if isinstance(size, tuple) else (size,), ws=(ws,), stream=stream, fixture=1,
           **attrs_)
