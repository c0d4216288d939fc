"""What each claim observes, and from which artefact: the evidence column of the spec document.

A claim of this catalogue reads an observation (spec/observables), and an observation is a
transcription of an artefact: the memory plan and graph facts a compiled model carries, the
model file's bytes, a runtime's region bindings at load, the device trace of a call, the
argument tables the tasks ran with, the caller's buffers, the outputs compared with an oracle.
``OBSERVES[id]`` says, for the reviewer, which of those facts the claim's predicate reads and
which artefact they come from, so a claim that would have to trust an implementation's own
account of itself shows. tests/spec/test_observes.py keeps this table and the catalogue in step.
"""
from __future__ import annotations

import attrs


@attrs.frozen
class Observed:
    facts: str      # what the predicate reads
    artefact: str   # where those facts come from


# Artefacts, named once.
PLAN = ("the memory plan of the model file (plan section of the .zcm) and the graph after the passes; or another "
        "compiler's saved program and plan, read by `zcspec import` (docs/foreign-planners.md)")
MODEL_FILE = "the model file's bytes (header, regions, tasks and their argument slots, zero-copy table)"
TRACE = "the device trace of the call (allocations, frees, copies, argument writes, launches, events)"
LOAD = "the runtime's region bindings at load and the device trace of the load"
PROBE = "the device trace of a probe program (allocations, frees, each access and the device's verdict)"
ALLOCATOR_TRACE = ("the device trace of a probe program whose threads call the runtimes' allocators (each "
                   "call's enter and exit with its thread, allocations, virtual reservations)")
PROBE_KERNELS = ("the probe's record of each compute step (what the device API raised, the input bytes, the "
                 "output bytes before the launch and after)")
API_CALL = ("the caller's own record of one API call (what it passed, whether it had unloaded the model, what "
            "came back), the model file's I/O counts and batch labels, the device trace during the call and the "
            "caller's buffers read before and after it")
INPUT_FILE = ("the input file as its format writes it (an ONNX model read with the onnx package, a graph JSON "
              "file with the json module), and the import's outcome: accepted, or the error it raised")

OBSERVES: dict[str, Observed] = {
    "INPUT-ARITY-REFUSED": Observed("each node's op type, domain and number of inputs, the file's opset, against "
                                    "ONNX's schemas (onnx.defs); whether the import accepted the file", INPUT_FILE),
    "INPUT-UNKNOWN-OP-REFUSED": Observed("each node's op type and domain, the file's opset, against ONNX's schemas "
                                         "and the spec's list of GE's op types; whether the import accepted the file",
                                         INPUT_FILE),
    "INPUT-CYCLE-REFUSED": Observed("the tensors each node reads and writes and the nodes it waits on; whether the "
                                    "import accepted the file", INPUT_FILE),
    "INPUT-DANGLING-REFUSED": Observed("the tensors each node reads and writes, the nodes it waits on, the graph's "
                                       "inputs, constants and outputs; whether the import accepted the file",
                                       INPUT_FILE),
    "INPUT-ONE-WRITER-REFUSED": Observed("the tensors each node writes, node names, the graph's inputs and constants, "
                                         "names listed twice; whether the import accepted the file", INPUT_FILE),
    "INPUT-STATIC-SHAPE-REFUSED": Observed("the dims the file gives each graph input (a graph JSON file: each tensor), "
                                           "the inputs the caller shaped; whether the import accepted the file",
                                           INPUT_FILE),
    "INPUT-FORMAT-REFUSED": Observed("a graph JSON file's own text, read with the json module against the "
                                     "format's document rules (docs/graph-format.md); whether the import accepted "
                                     "the file", INPUT_FILE),
    "INPUT-FORMAT-REFUSAL-JUSTIFIED": Observed("a graph JSON file's own text against the format's rules, and the "
                                               "import's outcome: refused, with the refusal's class", INPUT_FILE),
    "INPUT-RANDOM-REFUSED": Observed("each node's op type, domain, inputs and attributes (is_test, ratio) as the "
                                     "file writes them, the values of its small constants (training_mode, ratio), "
                                     "the file's opset; whether the import accepted the file", INPUT_FILE),
    "INPUT-IMPORT-TYPES": Observed("the shape and element type ONNX's shape inference (the onnx package) gives "
                                   "each value of the file, against the shape and type of the tensor of that name "
                                   "in the graph the import returned", INPUT_FILE + " and the imported graph"),
    "INPUT-REFUSAL-NAMES-FAULT": Observed("the refusal's message, against the nodes and tensors of the faults the "
                                          "other input-file claims find in the file", INPUT_FILE),
    "LAYOUT-NO-OVERLAP": Observed("tensor offsets, sizes, regions, lifetimes, alias_of and batch labels", PLAN),
    "LAYOUT-STREAM-ORDER": Observed("tensor offsets, sizes, regions and alias_of; the stream of each node that "
                                    "runs a task, data edges (producers, consumers), control edges, graph I/O",
                                    PLAN),
    "LAYOUT-ALIGN": Observed("block and tensor offsets and sizes; the granularities come from the spec's "
                             "capability table for the plan's SoC", PLAN),
    "LAYOUT-TENSOR-SIZE": Observed("each tensor's size against its raw bytes (shape and dtype in the graph), "
                                   "padding from the spec's capability table, or against the size the graph "
                                   "sets for it", PLAN),
    "LAYOUT-REGION-COVER": Observed("region sizes, tensor and block placements, block membership", PLAN),
    "LAYOUT-IO-ATTRIBUTES": Observed("the memory_size, zero_copy_memory_size, basic offset and "
                                     "_is_zero_copy_block attributes against the placements and against which "
                                     "graph I/O GE's rules make zero copy (graph facts, the spec's capability "
                                     "table)", PLAN),
    "LAYOUT-REGIONS-PACKED": Observed("the feature-map and zero-copy blocks' offsets and sizes, their tensors' "
                                      "offsets and sizes, and the region sizes; the zero-copy granularity from the "
                                      "spec's capability table for the plan's SoC", PLAN),
    "LAYOUT-SIZE-ATTRIBUTES": Observed("the memory_size and zero_copy_memory_size attributes against the bytes the "
                                       "feature-map blocks cover and the sum of the zero-copy blocks' sizes", PLAN),
    "LAYOUT-REF-SHARES-INPUT": Observed("the graph's ref declarations (refs, from _reuse_input) against the ref "
                                        "output's and its input's region and offset; alias_of chains, consumers, "
                                        "producers, streams and node types for where the input may be overwritten",
                                        PLAN),
    "LAYOUT-INPLACE-SHARES-INPUT": Observed("the graph's in-place pairs (inplace, from _inplace_ability) against the "
                                            "output's and its inputs' region and offset; raw bytes, consumers, "
                                            "producers, streams, continuous groups and outputs, graph outputs and "
                                            "alias_of chains for whether GE keeps a pair", PLAN),
    "LAYOUT-INPLACE-REFUSED": Observed("the graph's in-place pairs (inplace, from _inplace_ability) against the "
                                       "output's and its inputs' region and offset; raw bytes, graph inputs and "
                                       "outputs, weights, node types, continuous outputs, consumers, producers, "
                                       "streams and alias_of chains for why GE refuses a pair", PLAN),
    "LAYOUT-STREAM-HOLD": Observed("placements and lifetimes against the steps GE holds memory read on another "
                                   "stream, recomputed from streams, stream labels, producers, consumers and "
                                   "control edges", PLAN),
    "LAYOUT-INPUTS-SORTED": Observed("zero-copy blocks of graph inputs: order, adjacency, raw input sizes", PLAN),
    "LAYOUT-ALIAS-SHARES-ROOT": Observed("alias chains (alias_of) against the roots' placements and blocks", PLAN),
    "LAYOUT-LIFETIME-COVERS-USES": Observed("lifetimes against the steps of the graph's readers and outputs", PLAN),
    "LAYOUT-LIFETIME-COVERS-WRITES": Observed("lifetimes against the steps of the ops that write each tensor",
                                              PLAN),
    "LAYOUT-ARENA-ALIGN": Observed("offsets of the tensors that own memory, against their arena's declared "
                                   "alignment or, when the plan names its planner, the larger alignment that "
                                   "planner documents (the spec's planner table)", PLAN),
    "LAYOUT-IN-PLACE-READS": Observed("the byte ranges an in-place step reads of its root, where they go, and "
                                      "the ranges it writes (from the program's op, e.g. an XLA fusion's slices)",
                                      PLAN),
    "LAYOUT-ARENA-ALLOCATED": Observed("the steps of one execution path that allocate each arena "
                                       "(arena_allocations), against the first step of each tensor family in it",
                                       PLAN),
    "LAYOUT-READS-SEE-WRITES": Observed("the steps that write each tensor (writes, producers) and read it (consumers), "
                                        "alias_of chains, the bytes in-place steps write, the arena kinds and graph "
                                        "inputs", PLAN),
    "LAYOUT-LOWER-BOUND": Observed("the lower bound recomputed from live aligned sizes per step and arena, "
                                   "exclusive branches counted by their heaviest", PLAN),
    "MEM-ZC-NOMERGE": Observed("zero-copy blocks and the tensors they hold", PLAN),
    "MEM-ZC-NOREUSE": Observed("zero-copy flags of tensors and blocks, regions, every tensor's bytes", PLAN),
    "MEM-ZC-IO": Observed("which graph I/O is zero copy, against the graph's Data/NetOutput edges, continuous "
                          "inputs and the op types' zero-copy support in the spec's capability table", PLAN),
    "MEM-ATOMIC-NOREUSE": Observed("atomic outputs (op attributes in the graph) and every tensor's bytes", PLAN),
    "MEM-FIXED-NOREUSE": Observed("weights, fixed-address op types and the weight/fixed regions", PLAN),
    "MEM-CONT-INPUT": Observed("the placements of each continuous-input node's inputs, in input order", PLAN),
    "MEM-CONT-OUTPUT": Observed("the placements of each continuous-output node's outputs, in output order (the "
                                "node attribute in the graph)", PLAN),
    "MEM-WS-OWNER": Observed("workspace lifetimes against the step of the node that declares them", PLAN),
    "PASS-LAYOUT-CONFLICT": Observed("the copies (Identity tasks, MemcpyAddrAsync tasks) on the graph's tensors "
                                     "(each node's input and output tensors, views, the continuous_output "
                                     "attribute; task kinds, loop flags, slots and their addresses for in-place "
                                     "writes) against the spec's capability table and op facts",
                                     MODEL_FILE + " and the graph after the passes"),
    "PASS-VIEW-CONTIGUOUS": Observed("each Split and Slice node with no task whose output aliases its input: its "
                                     "attributes (axes, starts, ends, steps; a Split's axis and first output) and "
                                     "its input's shape", "the graph after the passes and the model file's tasks"),
    "PASS-VIEW-NOT-OUTPUT": Observed("each Split and Slice node with no task whose output aliases its input, and the "
                                     "nodes reading its outputs on to the NetOutput: which of them are views "
                                     "(no task, output aliasing input 0) or copies (a MemcpyAddrAsync, an "
                                     "Identity with a task)", "the graph after the passes and the model file's tasks"),
    "PASS-MEMCPY-ADDR-ASYNC": Observed("MemcpyAddrAsync tasks and the edges they sit on (producers, task kinds, "
                                       "loop flags, I/O edges) against the spec's capability table",
                                       MODEL_FILE + " and the graph after the passes"),
    "MF-WELL-FORMED": Observed("the header (magic, version, declared length, checksum recomputed from the "
                               "bytes) and whether the loader accepted the file",
                               MODEL_FILE + ", intact and mutated"),
    "MF-DETERMINED": Observed("the metadata field a re-signed file had changed, whether the loader accepted "
                              "it and whether the model it loaded equals the one the file was built from",
                              MODEL_FILE + ", built and re-signed with one field changed"),
    "MF-ATOMIC-CLEAN": Observed("each node's op type (atomic by the spec's op table, spec/op_facts.py) and the "
                                "tasks naming it: kind, stream, order and the argument slots' region, offset "
                                "and size", MODEL_FILE + " and the graph after the passes"),
    "MF-ZERO-COPY-TABLE": Observed("each argument slot's region, offset, tensor and an HCCL slot's zero-copy flag; "
                                   "the zero-copy table's entries; the Data and NetOutput nodes' tensors",
                                   MODEL_FILE + " and the graph after the passes"),
    "MF-TASK-ON-NODE-STREAM": Observed("each task's node and stream; each node's stream in the graph",
                                       MODEL_FILE + " and the graph after the passes"),
    "MF-SLOT-BYTES": Observed("each argument slot's size and tensor; each tensor's shape and dtype in the graph, "
                              "counted in bytes by the spec's own element widths",
                              MODEL_FILE + " and the graph after the passes"),
    "MF-SLOT-IN-REGION": Observed("each argument slot's region, offset and size; the zero-copy table's entries",
                                  MODEL_FILE),
    "V1-SLOT-REFRESH": Observed("the argument values each launched task ran with against the user buffers and "
                                "the zero-copy table; copy-only I/O as the spec computes it",
                                "the argument tables as the device read them at each launch (the device trace's "
                                "launch events), the model file and the call's user buffers"),
    "V1-NO-MODEL-IO-SLOT": Observed("argument values at launch against the model's own I/O region",
                                    "the argument tables as the device read them at each launch (the device "
                                    "trace's launch events) and the runtime's region bindings"),
    "V1-COPY-ONLY-ONCE": Observed("copies between user buffers and model addresses; which I/O must be copied "
                                  "is computed by the spec from the model file and the SoC", TRACE),
    "V1-ZERO-COPY-WHEN-ELIGIBLE": Observed("copies and staging of I/O the spec deems eligible, and task "
                                           "arguments pointing into their buffers", TRACE),
    "V1-REUSE-ZC-MEMORY": Observed("the load's device allocations against the I/O region's address, the addresses "
                                   "the load wrote into registered slots of I/O bound to the caller's buffers, and "
                                   "the bytes the model's regions, argument tables and copied I/O account for "
                                   "(not the runtime's own 'backed' flag)",
                                   "the device trace of the load (allocations, argument writes) and the model "
                                   "file's regions, tasks and I/O"),
    "V1-HCCL-COPY": Observed("copies of I/O whose only reason to be copied is an HCCL task's zero-copy flag "
                             "(read from the model file's task definitions)", TRACE),
    "V1-BUFFER-SIZE": Observed("the call's result against the user buffer sizes and the model's padded and raw "
                               "I/O sizes", "the call result, the user buffers and the model file"),
    "V1-VALID-CALL-SUCCEEDS": Observed("the call's result against the user buffers, their sizes and overlaps, and "
                                       "the caller's live allocations and their address space", "the call result, "
                                       "the user buffers, the model file and the device trace"),
    "API-MISUSE-REFUSED": Observed("the call's entry point, the caller's unload before it, the buffer counts and "
                                   "batch label passed against the model file's I/O counts and labels, each option's "
                                   "value and type against the spec's table of option domains; the outcome (error "
                                   "code, message)", API_CALL),
    "API-MISUSE-CHANGES-NOTHING": Observed("the device trace's allocations, frees, copies, argument writes and "
                                           "launches during a refused misuse; the caller's buffers before and after",
                                           API_CALL),
    "CALL-INVALID-REFUSED": Observed("the user buffers against the model's I/O sizes and the caller's live "
                                     "allocations (their address space); the call's error event (its code and "
                                     "buffer) and its launches, copies, argument writes and allocations",
                                     "the user buffers, the model file and the device trace"),
    "V2-AZC-NO-ALLOC": Observed("kernel writes and copies of outputs against runtime and pool allocations", TRACE),
    "V2-AZC-REJECT": Observed("the call's result and writes into an undersized or null output buffer",
                              "the call result and " + TRACE),
    "V2-DEFAULT-FALLBACK": Observed("where the producing kernel wrote and which copy filled the caller's buffer",
                                    TRACE),
    "V2-OUT-IS-USER": Observed("the producing kernel's writes into the output's user buffer, and copies into it",
                               TRACE),
    "V2-NO-OVERRUN": Observed("every write touching a user buffer against that buffer's range", TRACE),
    "EXEC-ORACLE": Observed("each output's difference from an independent reference (onnx's reference "
                            "evaluator, onnxruntime on the source file, or shipped reference outputs)",
                            "the outputs read back from the user buffers after the call"),
    "EXEC-V1-EQ-V2": Observed("the digests of each output from both runtimes", "the outputs of both runtimes"),
    "EXEC-NO-FAULT": Observed("device faults", TRACE),
    "V2-TRUST-SHAPE": Observed("per output, whether GE computes it straight into the caller's memory (its tensor's "
                               "alias root, graph inputs, region, earlier outputs sharing its memory), and the "
                               "caller's output tensors' shapes before and after the call against the model's "
                               "(not runtime v2's lowered graph)",
                               "the model file (I/O table and plan) and the caller's output tensors"),
    "EXEC-COUNTERS-TRUE": Observed("the device's counters of the call (copies per direction and bytes, launches, "
                                   "argument writes) against the spec's recount of its trace: each copy's "
                                   "direction from the address spaces of the allocations and user buffers it "
                                   "moves between, the launches the device ran, the argument writes", TRACE),
    "EXEC-NO-LEAK": Observed("device allocations and frees up to the unload, pool spans included", TRACE),
    "EXEC-FAILED-CALL-NO-CHANGE": Observed("writes into user buffers and allocations left live by a failed call",
                                           TRACE),
    "EXEC-NO-OVERRUN": Observed("every read and write range against the user buffers and the allocations "
                                "live at that point (from the trace's own alloc/free events)", TRACE),
    "EXEC-READ-WRITTEN": Observed("shadow memory replayed from the trace: every byte read (inputs, and the "
                                  "outputs an accumulating kernel reads before adding into them) has a prior "
                                  "writer", TRACE),
    "EXEC-NO-RACE": Observed("cross-stream reads and writes against the record/wait events between them "
                             "(vector clocks)", TRACE),
    "EXEC-TENSOR-INTACT": Observed("the last writer of every byte a kernel reads, by the tensor names the "
                                   "launch ranges carry", TRACE),
    "EXEC-INPLACE-SAME-BYTES": Observed("launches whose read and write ranges overlap", TRACE),
    "EXEC-STREAMS-APART": Observed("the device stream of every launch against the stream the model file gives "
                                   "its task", "the device trace of the call and the model file's tasks"),
    "TRACE-FORM": Observed("every event's seq, address, size, source, destination and ranges, in the order listed",
                           "the device trace of the load and of the call"),
    "DEVICE-TRACE-FORM": Observed("every device and allocator event's seq, address, size and ranges, in the order "
                                  "listed", "the device trace of a probe program, with its allocators' calls"),
    "DEVICE-BOUNDS": Observed("each access and whether the device refused it, against legality computed from "
                              "the allocations and frees", PROBE),
    "DEVICE-FAULT-KIND": Observed("the fault kind of each refused access against the kind the allocation "
                                  "history implies", PROBE),
    "DEVICE-KERNEL-REFUSAL": Observed("each compute step's op type, dtype, input and output shapes, its input bytes, "
                                      "its output bytes before and after, and the exception the device raised, "
                                      "against legality computed from the shapes (broadcasting)", PROBE_KERNELS),
    "DEVICE-COLLECTIVE": Observed("each collective step's op, rank count, shapes and attributes, every rank's "
                                  "input bytes and output bytes after the synchronize, and what the device raised",
                                  "the probe's record of each collective step over several emulated devices"),
    "DEVICE-COUNTERS-TRUE": Observed("the device's own counters over a probe (faults, tasks executed, mallocs, frees) "
                                     "against the probe's refused and performed accesses, mallocs and frees",
                                     PROBE + ", with the device's counters copied as they are"),
    "DEVICE-ALLOC-FIT": Observed("every allocation's address and size, every free's address, each refused malloc's "
                                 "size and each refused free's fault kind, in order, the device's memory (base and "
                                 "capacity) and its SoC's name, against the spec's own alignment table",
                                 "the device trace of a probe program (allocations, frees and the faults of refused "
                                 "mallocs and frees)"),
    "DEVICE-MALLOC-ARGS": Observed("each malloc call's asked size and alignment, the address the device API "
                                   "returned and the exception it raised, against the spec's rule for valid "
                                   "arguments",
                                   "the probe's record of each malloc step as it made it (the call refused for its "
                                   "arguments leaves nothing in the device trace)"),
    "DEVICE-KERNEL-ORACLE": Observed("each oracle step's op, attributes, input bytes and output slots, its output "
                                     "bytes before and after, what the device raised, and onnxruntime's outputs "
                                     "(shapes, dtypes, bytes) or error for the same node on the same input bytes",
                                     "the probe's record of each oracle step, with onnxruntime's run of a one-node "
                                     "ONNX model made by the checker (checks/onnxruntime_oracle.py)"),
    "V1-ACTIVE-MEMORY-BLOCKS": Observed("the pieces each malloc_memory call passed, as the probe recorded them "
                                        "(active_requests); the allocator's enter and exit and the device "
                                        "allocations and frees tagged with its name", ALLOCATOR_TRACE),
    "V1-ALLOCATOR-ACCOUNTING": Observed("each call into a v1 session allocator (its enter and exit, the method, the "
                                        "calling thread) and the allocations, frees, reservations and releases "
                                        "tagged with the allocator's name, in trace order", ALLOCATOR_TRACE),
    "V2-ALLOCATOR-ONE-THREAD": Observed("each call into a v2 caching allocator: its enter and exit, the method and "
                                        "the calling thread, in trace order", ALLOCATOR_TRACE),
    "V2-POOL-CACHED": Observed("each malloc's asked size and returned block, each free's block, the spans "
                               "(device memory tagged with the allocator's name) allocated and freed, and the calls "
                               "they happen in", ALLOCATOR_TRACE),
    "V2-POOL-BLOCKS": Observed("each malloc call into a v2 caching allocator: the size it asked for (its enter) and "
                               "the address it returned (its exit); the device memory tagged with the allocator's "
                               "name (its spans), allocated and freed, in trace order", ALLOCATOR_TRACE),
}
