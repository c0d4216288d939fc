"""Lowering a compiled model into an execution graph (GE's gert lowering: netoutput_converter.cc
``LoweringNetOutput``, inputs_converter.cc ``LoweringDataNode``).

``lower(model, options) -> ExeGraph`` emits, in execution order:

1. ``InputData`` / ``OutputData``: the caller's input and output tensors (one output each);
2. ``SelectAllocator`` (``GetExternalAllocator`` under always_external_allocator): the
   device allocator of this execution (SelectL1Allocator);
3. per model input: ``SplitDataTensor`` (the caller's tensor data, shared) and
   ``MakeSureTensorAtDevice`` (copies only a host-placed input);
4. ``ConstTensorData`` for weights and fixed tensors (memory loaded once);
5. per task, in the TaskList's order: an ``AllocMemory`` before the first task touching each
   memory group (groups.py), views of it (``IdentityAddr`` for a whole-tensor alias,
   ``ViewAddr`` for a piece at an offset), the launch (``LaunchKernel``, ``LaunchMemset``,
   ``LaunchHccl``) reading every slot's tensor data, then a ``FreeMemory`` after the last
   task touching a group;
6. NetOutput's lowering: per output an ``EnsureTensorAtOutMemory(tensor data, OutputData:i)``,
   then the ``FreeMemory`` of the groups that hold outputs. Its shape is the model's, which GE's
   Ensure reads from the InferShape of the node computing the output: ``infer_shape`` names that
   node (none for a model input or a weight passed through), ``node_outputs`` every output of it
   (what TrustOutTensor reads).

The graph is what GE builds before its passes; ``passes.run_passes`` then applies
ModelOutTensorZeroCopy and TrustOutTensor as the options say.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.errors import LoweringError
from zcspec.impl.runtime.v2.exe_graph import Edge, ExeGraph, ExeNode
from zcspec.impl.runtime.v2.groups import Group, memory_groups
from zcspec.impl.runtime.v2.options import LoweringOptions

ALLOCATOR = "allocator/hbm"
INPUT_DATA, OUTPUT_DATA = "InputData", "OutputData"
LAUNCH_TYPES = {"kernel": "LaunchKernel", "memcpy": "LaunchKernel", "memcpy_addr": "LaunchKernel",
                "memset": "LaunchMemset", "hccl": "LaunchHccl"}


class _Builder:
    def __init__(self, model, options: LoweringOptions):
        self.model, self.options = model, options
        self.groups, self.root_of = memory_groups(model)
        self.nodes: list[ExeNode] = []
        self.td: dict[str, Edge] = {}      # tensor -> edge of its tensor data
        self.base: dict[str, Edge] = {}    # group root -> edge of the group's memory
        self.freed: set[str] = set()
        self.staged: dict[str, Edge] = {}  # model input -> its tensor data as the caller passed it
        self.input_index = {io.tensor: io.index for io in model.tasks.inputs}
        self.touched: dict[str, set[int]] = {}  # group root -> streams whose tasks touched it so far

    def add(self, node: ExeNode) -> ExeNode:
        self.nodes.append(node)
        return node

    def io_nodes(self) -> None:
        t = self.model.tasks
        self.add(ExeNode(INPUT_DATA, INPUT_DATA, outputs=len(t.inputs), attrs={"names": [i.tensor for i in t.inputs]}))
        self.add(ExeNode(OUTPUT_DATA, OUTPUT_DATA, outputs=len(t.outputs),
                         attrs={"names": [o.tensor for o in t.outputs]}))
        kind = "GetExternalAllocator" if self.options.always_external_allocator else "SelectAllocator"
        self.add(ExeNode(ALLOCATOR, kind, attrs={"placement": "device"}))

    def inputs(self) -> None:
        for io in self.model.tasks.inputs:
            split = self.add(ExeNode(f"split_data/{io.tensor}", "SplitDataTensor", [Edge(INPUT_DATA, io.index)],
                                     attrs={"tensor": io.tensor, "nbytes": io.nbytes, "index": io.index}))
            dev = self.add(ExeNode(f"at_device/{io.tensor}", "MakeSureTensorAtDevice",
                                   [Edge(split.name), Edge(ALLOCATOR)],
                                   attrs={"tensor": io.tensor, "nbytes": io.nbytes, "index": io.index}))
            self.staged[io.tensor] = Edge(dev.name)
            group = self.groups[self.root_of[io.tensor]]
            if group.kind == "input":
                self.open_group(group, Edge(dev.name))

    def consts(self) -> None:
        for g in self.groups.values():
            if g.kind == "const":
                node = self.add(ExeNode(f"const/{g.root}", "ConstTensorData",
                                        attrs={"region": g.region, "offset": g.offset, "size": g.size}))
                self.open_group(g, Edge(node.name))

    def open_group(self, g: Group, base: Edge) -> None:
        """Record the group's memory and emit the tensor data of each member (aliases after their targets)."""
        self.base[g.root] = base
        self.td[g.root] = base
        pending = [m for m in g.members if m.tensor != g.root]
        while pending:
            ready = [m for m in pending if m.alias_of in self.td or m.alias_of not in {p.tensor for p in pending}]
            if not ready:
                raise LoweringError(f"alias cycle among {[m.tensor for m in pending]}", tensor=g.root)
            for m in ready:
                self.td[m.tensor] = self.view(g, m)
            pending = [m for m in pending if m not in ready]

    def view(self, g: Group, m) -> Edge:
        target = g.member(m.alias_of) if m.alias_of in self.td else None
        if target is not None and target.rel == m.rel and target.nbytes == m.nbytes:
            node = ExeNode(f"view/{m.tensor}", "IdentityAddr", [self.td[m.alias_of]], attrs={"tensor": m.tensor})
        else:
            node = ExeNode(f"view/{m.tensor}", "ViewAddr", [self.base[g.root]],
                           attrs={"tensor": m.tensor, "offset": m.rel, "size": m.nbytes})
        return Edge(self.add(node).name)

    def tasks(self) -> None:
        by_first: dict[int, list[Group]] = {}
        by_last: dict[int, list[Group]] = {}
        for g in self.groups.values():
            if g.kind == "alloc" and g.first is not None:
                by_first.setdefault(g.first, []).append(g)
            if g.last is not None and not self.holds_output(g) and g.kind != "const":
                by_last.setdefault(g.last, []).append(g)
        for task in self.model.tasks.tasks:
            for g in by_first.get(task.index, ()):
                self.alloc(g)
            launch = self.launch(task)
            for g in by_last.get(task.index, ()):
                self.free(g, (launch,))
        for g in self.groups.values():  # groups no task touches (a reshape of an input fed to an output)
            if g.kind == "alloc" and g.first is None:
                self.alloc(g)

    def alloc(self, g: Group) -> None:
        node = self.add(ExeNode(f"alloc/{g.root}", "AllocMemory", [Edge(ALLOCATOR)],
                                attrs={"tensor": g.root, "size": g.size, "raw": g.raw}))
        self.open_group(g, Edge(node.name))
        for tensor in g.inputs_inside:  # model inputs placed inside this memory: copied in from the caller's
            m = g.member(tensor)
            copy = self.add(ExeNode(f"copy_in/{tensor}", "CopyTensorData", [self.staged[tensor], self.td[tensor]],
                                    outputs=0, attrs={"tensor": tensor, "nbytes": m.nbytes,
                                                       "index": self.input_index[tensor]}))
            self.add(ExeNode(f"free_staged/{tensor}", "FreeMemory", [self.staged[tensor]], outputs=0, after=[copy.name],
                             attrs={"tensor": tensor}))

    def free(self, g: Group, after: tuple[str, ...]) -> None:
        self.freed.add(g.root)
        self.add(ExeNode(f"free/{g.root}", "FreeMemory", [self.base[g.root]], outputs=0, after=after,
                         attrs={"tensor": g.root}))

    def launch(self, task) -> str:
        stream = 0 if self.options.enable_single_stream else task.stream
        attrs_ = {"task": task.index, "op_type": task.op_type, "stream": stream}
        waits = self.waits(task, stream)
        if waits:
            attrs_["waits"] = waits
        node = ExeNode(f"{task.kind}/{task.node}", LAUNCH_TYPES[task.kind], [self.td[s.tensor] for s in task.slots],
                       outputs=0, attrs=attrs_)
        return self.add(node).name

    def waits(self, task, stream: int) -> tuple[int, ...]:
        """Other streams that touched this task's memory before it (inputs are staged on stream 0), or ran
        a task its control edges order it after."""
        tasks = self.model.tasks.tasks
        other = {0 if self.options.enable_single_stream else tasks[a].stream for a in task.after} - {stream}
        for s in task.slots:
            g = self.groups[self.root_of[s.tensor]]
            seen = self.touched.setdefault(g.root, {0} if g.kind == "input" or g.inputs_inside else set())
            other |= seen - {stream}
            seen.add(stream)
        return tuple(sorted(other))

    def holds_output(self, g: Group) -> bool:
        outs = {o.tensor for o in self.model.tasks.outputs}
        return any(m.tensor in outs for m in g.members)

    def shape_sources(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """Output tensor -> (the nodes whose tasks write it, every output of those nodes): where GE's
        Ensure reads the output's shape from, the InferShape of the node computing it (a model input or
        a weight passed through has none), and what TrustOutTensor's ``CanBeDeleted`` asks of that
        InferShape (every output of it a model output)."""
        outs: dict[str, set[str]] = {}
        writers: dict[str, set[str]] = {}
        for task in self.model.tasks.tasks:
            for s in task.slots:
                if s.role == "out":
                    outs.setdefault(task.node, set()).add(s.tensor)
                    writers.setdefault(s.tensor, set()).add(task.node)
        return {t: (tuple(sorted(nodes)), tuple(sorted(set().union(*(outs[n] for n in nodes)))))
                for t, nodes in writers.items()}

    def outputs(self) -> None:
        ensures = []
        last_launch = next((n.name for n in reversed(self.nodes) if n.type.startswith("Launch")), None)
        sources = self.shape_sources()
        for io in self.model.tasks.outputs:
            infer_shape, node_outputs = sources.get(io.tensor, ((), ()))
            node = ExeNode(f"ensure/{io.tensor}", "EnsureTensorAtOutMemory",
                           [self.td[io.tensor], Edge(OUTPUT_DATA, io.index), Edge(ALLOCATOR)],
                           outputs=0, after=[last_launch] if last_launch else [],
                           attrs={"output": io.tensor, "index": io.index, "shape": io.shape, "dtype": io.dtype,
                                  "nbytes": io.nbytes, "placement": "device", "fallback": not self.options.ge_compat,
                                  "infer_shape": infer_shape, "node_outputs": node_outputs})
            ensures.append(self.add(node).name)
        for g in self.groups.values():  # output memory, and inputs nothing reads
            if g.kind != "const" and g.root not in self.freed:
                self.free(g, tuple(ensures))


def lower(model, options: LoweringOptions = LoweringOptions()) -> ExeGraph:
    """The execution graph of ``model`` before any pass (see the module docstring)."""
    b = _Builder(model, options)
    b.io_nodes()
    b.inputs()
    b.consts()
    b.tasks()
    b.outputs()
    return ExeGraph(model.name, b.nodes).validate()
