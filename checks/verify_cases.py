"""The fixed cases of ``zcspec verify``: the zoo's scenarios and the fixed runs each claim needs.

``zoo_cases(config)`` yields ``(label, Scenario)`` for every model of ``config.models`` (plans and model
files on every strategy, executions on the first), and for the fixed runs that put a claim to the test
where the zoo alone would not: other SoCs, HCCL without zero-copy support, mutated model files, loads
with the caller's memory, work memory moved between calls, the ACL entry points, a failing external
allocator and trusted output shapes (each table below says why it exists). ``device_cases(config)``
yields the device probes. ``config`` is a ``checks.verify.VerifyConfig``; checks/verify.py runs them.
"""
from __future__ import annotations

import os

from zcspec.checks.execution import default_runtimes
from zcspec.checks.models import parse_value, zoo_path
from zcspec.checks.scenario import OBSERVERS, Scenario
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, fixed_programs
from zcspec.checks.strategies.model_file_crafts import crafted_mutations
from zcspec.checks.strategies.model_files import craft_name, field_sweep, fixed_mutations
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.options import CompileOptions

def zoo_cases(config):
    """(label, Scenario) for every zoo case and fixed run of ``config`` (a VerifyConfig)."""
    for model in config.models:
        graph = load(model, config.shapes, config.values)
        for strategy in config.strategies:
            options = CompileOptions(soc=config.soc, strategy=strategy)
            for kind in config.kinds:
                if kind == "execution" and strategy != config.strategies[0]:
                    continue   # runtimes are checked on one plan per model; layouts on every strategy
                if kind in OBSERVERS and kind in _ZOO_KINDS:
                    yield (f"{model} [{kind}, {strategy}]",
                           Scenario(kind, graph, options, case_runs(kind, graph, model, config.values)))
    if "execution" in config.kinds and "builtin:collectives" in config.models:
        # HCCL without zero-copy support (V1-HCCL-COPY) exists only on SoCs that cannot refresh it.
        graph = load("builtin:collectives")
        for soc in ("legacy", "ascend310p"):
            yield (f"builtin:collectives [execution, {soc}]",
                   Scenario("execution", graph, CompileOptions(soc=soc), case_runs("execution", graph)))
    for model in (m for m in OTHER_SOC_MODELS if m in config.models):
        graph = load(model)
        for soc in OTHER_SOCS:
            for kind in (k for k in ("model_file", "execution") if k in config.kinds):
                yield (f"{model} [{kind}, {soc}]",
                       Scenario(kind, graph, CompileOptions(soc=soc), case_runs(kind, graph)))
    for model in (m for m in SINGLE_OP_MODELS if m in config.models):
        graph = load(model)
        for kind in (k for k in ("model_file", "execution") if k in config.kinds):
            yield (f"{model} [{kind}, single-op build]",
                   Scenario(kind, graph, CompileOptions(soc=config.soc, single_op=True), case_runs(kind, graph)))
    if "execution" in config.kinds:
        for model in (m for m in SINGLE_OP_EXECUTOR_MODELS if m in config.models):
            graph, options = load(model), CompileOptions(soc=config.soc, single_op=True)
            for run in _single_op_runs(compile_stages(graph, options).model):
                yield (f"{model} [execution, single-op executor{_run_label(run)}]",
                       Scenario("execution", graph, options, {"runs": [run]}))
    if "model_file" in config.kinds:   # malformed files: only they put MF-WELL-FORMED to the test
        for model in MUTATED_MODELS:
            graph = load(model)
            built = encode(compile_stages(graph, CompileOptions(soc=config.soc)).model)
            for m in fixed_mutations(config.seed) + field_sweep(built, config.seed):
                yield (f"{model} [model_file, {m['op']}@{m['at']}]",
                       Scenario("model_file", graph, CompileOptions(soc=config.soc), {"mutation": m}))
        for model in CRAFTED_MODELS:   # the refusals neither random bytes nor near values reach
            graph = load(model)
            built = encode(compile_stages(graph, CompileOptions(soc=config.soc)).model)
            for m in crafted_mutations(built, config.seed):
                yield (f"{model} [model_file, craft {craft_name(built, m)}@{m['at']}]",
                       Scenario("model_file", graph, CompileOptions(soc=config.soc), {"mutation": m}))
    if "execution" in config.kinds:
        for model in (m for m in CALLER_MEMORY_MODELS if m in config.models):
            graph = load(model)
            for run in CALLER_MEMORY_RUNS:
                keys = "+".join(k for k in ("work_memory", "weight_memory") if run.get(k))
                yield (f"{model} [execution, caller {keys}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [_judged(model, run)]}))
        for model in (m for m in MOVED_WORK_MODELS if m in config.models):
            graph = load(model)
            for run in MOVED_WORK_RUNS:
                zc = "" if run.get("zero_copy", True) else ", zero copy off"
                yield (f"{model} [execution, caller work memory moved between calls{zc}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [_judged(model, run)]}))
        for model in (m for m in ACL_MODELS if m in config.models):
            graph = load(model)
            for run in _acl_runs(graph):
                yield (f"{model} [execution, {_acl_label(run)}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
        for model in (m for m in EXTERNAL_ALLOC_MODELS if m in config.models):
            graph = load(model)
            for k in EXTERNAL_ALLOC_FAILS_AT:
                run = {"runtime": "v2", "always_external_allocator": True, "external_alloc_fails_at": k}
                yield (f"{model} [execution, v2 external allocator fails at {k}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
    if "execution" in config.kinds:
        for model in (m for m in TRUST_SHAPE_MODELS if m in config.models):
            graph = load(model)
            yield (f"{model} [execution, v2 trust_shape_on_out_tensor, always_zero_copy]",
                   Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [TRUST_SHAPE_RUN]}))
        for model in (m for m in SESSION_PEER_MODELS if m in config.models):
            graph = load(model)
            for run in SESSION_PEER_RUNS:
                when = "after the run's unload" if run["session_peer"] == run.get("calls", 1) else \
                    f"before call {run['session_peer']}"
                yield (f"{model} [execution, v1 session (policy {run['static_memory_policy']}) shared with a peer "
                       f"unloaded {when}{'' if run.get('zero_copy', True) else ', zero copy off'}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
        for model in (m for m in CALLER_MISTAKE_MODELS if m in config.models):
            graph = load(model)
            for label, run in _mistake_runs(graph):
                yield (f"{model} [execution, v1 {label}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
        for model in (m for m in IN_WORK_MEMORY_MODELS if m in config.models):
            graph = load(model)
            for label, run in IN_WORK_MEMORY_RUNS:
                yield (f"{model} [execution, v1 {label}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
        for model in (m for m in HOST_INPUT_MODELS if m in config.models):
            graph = load(model)
            for run in HOST_INPUT_RUNS:
                yield (f"{model} [execution, {_acl_label(run)}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
        for model in (m for m in LEGACY_PASSTHROUGH_MODELS if m in config.models):
            graph = load(model)
            yield (f"{model} [execution, v1 legacy_copy_only_addrs]",
                   Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [LEGACY_PASSTHROUGH_RUN]}))
        for model in (m for m in NULL_OUTPUT_MODELS if m in config.models):
            graph = load(model)
            for run in NULL_OUTPUT_RUNS:
                run = {**run, "output_sizes": {out: 0 for out in graph.outputs}}
                yield (f"{model} [execution, v2 null outputs{', zero copy off' if not run['zero_copy'] else ''}]",
                       Scenario("execution", graph, CompileOptions(soc=config.soc), {"runs": [run]}))
    if "execution" in config.kinds and "builtin:collectives" in config.models:
        graph = load("builtin:collectives")
        for run in HCCL_ONLY_RUNS:
            yield (f"builtin:collectives [execution, hccl_zero_copy_off, {run}]",
                   Scenario("execution", graph, CompileOptions(soc="ascend910b"),
                            {"runs": [{**run, "model_edits": ["hccl_zero_copy_off"]}]}))


# Models also compiled for the SoCs that cannot refresh every task kind: which I/O need a conflict copy
# (PASS-LAYOUT-CONFLICT) depends on the SoC, and on the default SoC every task is refreshable, so a pass
# that asked whether *any* task kind of a node is refreshable (not all: ReduceSum's memset on ascend310p)
# passed verify whenever the random campaign drew no such graph. The collectives (HCCL, not refreshed on
# legacy) and the constants (a weight as a model output: PASS-MEMCPY-ADDR-ASYNC) put both pass claims to
# the test on every verify, not only when the campaign draws such graphs.
OTHER_SOC_MODELS = ("builtin:atomic_output", "builtin:collectives", "builtin:fused_collective", "builtin:constants")
OTHER_SOCS = ("ascend310p", "legacy")


# A single-op build (GE's ATTR_SINGLE_OP_SCENE) copies a Data feeding the NetOutput through a MemcpyAddrAsync, as
# an offline build does: the zoo compiles neither, so PASS-MEMCPY-ADDR-ASYNC's single-op rule had no real file.
SINGLE_OP_MODELS = ("builtin:single_op",)


# GE's single-op executor (op_executor.cpp, impl/runtime/v2/single_op.py) forces always_zero_copy and the
# external allocator on every model it loads; verify ran none of its code before (0 of its 50 branches the suite
# runs), so an executor that dropped a forced option passed. Its runs are judged by the options GE's single-op
# entry promises (checks/execution/v2.py single_op_options): good buffers, outputs' shapes refreshed, and an
# output half its size or null, which always_zero_copy must refuse (V2-AZC-REJECT).
SINGLE_OP_EXECUTOR_MODELS = ("builtin:single_op", "builtin:atomic_clean")
SINGLE_OP_RUNS = ({}, {"refresh_output_ori_shape": True}, {"output_sizes": "half"}, {"output_sizes": "null"})


def _single_op_runs(model) -> list[dict]:
    """SINGLE_OP_RUNS on the compiled ``model`` (a single-op build renames an output its pass copies)."""
    out0 = model.tasks.outputs[0]
    sizes = {"half": max(out0.nbytes // 2, 1), "null": 0}
    return [{"runtime": "v2", "api": "single_op", **r, **({"output_sizes": {out0.tensor: sizes[r["output_sizes"]]}}
                                                          if "output_sizes" in r else {})} for r in SINGLE_OP_RUNS]


def _run_label(run: dict) -> str:
    rest = {k: v for k, v in run.items() if k not in ("runtime", "api")}
    return "".join(f", {k}={v}" if not isinstance(v, bool) else f", {k}" for k, v in rest.items())


MUTATED_MODELS = ("builtin:atomic_clean", "builtin:collectives", "builtin:inplace_passthrough")
# The crafted model files (checks/strategies/model_files.py CRAFTS): each a targeted edit, re-signed, that one of
# the loader's refusals exists for (a key missing or of another type, a duplicate name, an unknown region, a
# weight table that disagrees with its blob, ...); random bytes fail the checksum first and near values of a
# field's own type never reach them. A memset (atomic_clean), weights (constants), branches and a Merge
# (dynamic_batch): every craft applies to one of them.
CRAFTED_MODELS = ("builtin:atomic_clean", "builtin:constants", "builtin:dynamic_batch")
# V1-HCCL-COPY is judged only where the HCCL flag is an I/O's one reason to be copied: a compiled model
# never has that (the planner keeps such I/O out of zero-copy memory), a model whose HCCL tasks declare no
# zero-copy support does (checks/execution MODEL_EDITS), and only on GE's legacy path (legacy_copy_only_addrs):
# GE's execute path refreshes the HCCL task's slots, so the same runs without it must bind the I/O zero copy.
_HCCL_RUNS = ({"runtime": "v1"}, {"runtime": "v1", "calls": 2}, {"runtime": "v1", "reuse_zero_copy_memory": 1})
HCCL_ONLY_RUNS = _HCCL_RUNS + tuple({**run, "legacy_copy_only_addrs": True} for run in _HCCL_RUNS)


# V2-TRUST-SHAPE needs trust_shape_on_out_tensor with outputs computed into the caller's memory
# (SplitTensorForOutputData): only the random campaign drew that, and a change of its draws left the claim
# below the floor (2 distinct cases at 1e87b07), so these fixed runs put it to the test on every verify.
TRUST_SHAPE_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough", "builtin:constants")
TRUST_SHAPE_RUN = {"runtime": "v2", "trust_shape_on_out_tensor": True, "always_zero_copy": True}


# Runtime v2 with the caller's inputs in host memory, which it copies to the device itself (GE's
# MakeSureTensorAtDevice, impl/runtime/v2/kernels/io.py): the zoo's inputs are all on the device, so v2's
# staging of host inputs (a block of its own, an H2D copy, the block freed after the call) never ran under
# verify, and a staging that copied nothing or kept its block passed. Default and always_zero_copy modes.
HOST_INPUT_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough")
HOST_INPUT_RUNS = ({"runtime": "v2", "input_placement": "host"},
                   {"runtime": "v2", "input_placement": "host", "always_zero_copy": True})


# Runtime v1 on GE's legacy path (legacy_copy_only_addrs) with an output that passes an input through: the
# legacy rule copies such an output from the earlier I/O whose range holds it (GE: zero_copy_offset.cc, the
# copy source of an output sharing an input's address). The zoo ran the legacy path only on the collectives,
# which have no such output, so a copy-source rule that looked at inputs instead of outputs passed verify.
LEGACY_PASSTHROUGH_MODELS = ("builtin:view_passthrough", "builtin:inplace_passthrough")
LEGACY_PASSTHROUGH_RUN = {"runtime": "v1", "legacy_copy_only_addrs": True, "calls": 2}


# Runtime v2's default mode with no output buffer at all (null tensors): it hands each output over in its own
# memory (EnsureTensorAtOutMemory), the block the output was computed in when that block is the output's alone,
# else a copy. With zero copy off the zoo never gave null outputs, so the handing over of a whole block never
# ran under verify. builtin:inplace_passthrough also hands over an input passed through (copied first).
NULL_OUTPUT_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough")
NULL_OUTPUT_RUNS = ({"runtime": "v2", "zero_copy": False}, {"runtime": "v2", "zero_copy": True})


# Loads with the caller's own work (feature-map) and weight memory, as GE's LoadModelFromData with memory
# parameters: the zoo otherwise only loads models whose memory the runtime allocates.
CALLER_MEMORY_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough", "builtin:constants", "zoo:squeezenet")
CALLER_MEMORY_RUNS = ({"runtime": "v1", "work_memory": True}, {"runtime": "v1", "weight_memory": True},
                      {"runtime": "v1", "work_memory": True, "weight_memory": True, "calls": 2})

# The caller's work memory moved between calls (ge.featureBaseRefreshable, LoadedModel.update_work_memory)
# and the old memory freed: no other run moves it, so a move that left a feature-map slot on the old memory,
# or never moved the base, passed verify. Each call after the first runs on a fresh work allocation.
MOVED_WORK_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough", "builtin:sized_inputs", "zoo:squeezenet")
MOVED_WORK_RUN = {"runtime": "v1", "work_memory": True, "feature_base_refreshable": True, "move_work": True, "calls": 3}
MOVED_WORK_RUNS = (MOVED_WORK_RUN, {**MOVED_WORK_RUN, "zero_copy": False})   # zero copy off: all I/O in the region

# Executions through the ACL entry points (checks/execution/entries.py: the model file's bytes, aclrtMalloc'd
# buffers, datasets, config handles, aclmdlSetDynamicBatchSize): every other execution calls runtime v1's
# Python entry points, so a facade that bound a dataset's buffers to the wrong I/O, took a host buffer for a
# device one, dropped a config option or leaked at unload passed verify. One run per load call and option the
# facade translates; the dynamic-batch model's runs choose each branch through the dataset.
ACL_MODELS = ("builtin:atomic_clean", "builtin:inplace_passthrough", "builtin:constants", "builtin:dynamic_batch")
ACL_RUNS = ({"api": "acl", "calls": 2, "rebind": False}, {"api": "acl", "work_memory": True, "weight_memory": True},
            {"api": "acl", "placement": "host"}, {"api": "acl_config", "reuse_zero_copy_memory": 1, "work_memory": True},
            {"api": "acl_config", "zero_copy": False, "weight_memory": True, "threads": 2},
            {"api": "acl", "output_sizes": "half"})


def _judged(model: str, run: dict) -> dict:
    """``run`` as a light zoo model is judged (checks/execution/v1.py): all-ones inputs, onnxruntime on its file."""
    return {**run, "inputs": "ones", "onnx": zoo_path(model[4:])} if model.startswith("zoo:") else run


def _acl_runs(graph) -> list[dict]:
    """ACL_RUNS on ``graph`` (``"half"``: its first output's buffer at half the output's size, refused), each
    once per dynamic-batch branch the graph has."""
    out0 = graph.outputs[0]
    runs = [{"runtime": "v1", **r, "output_sizes": {out0: max(graph.desc[out0].nbytes // 2, 1)}}
            if r.get("output_sizes") == "half" else {"runtime": "v1", **r} for r in ACL_RUNS]
    labels = sorted({rules.batch_label(n) for n in graph.nodes} - {""})
    return [{**r, "batch": b} for b in labels for r in runs] if labels else runs


def _acl_label(run: dict) -> str:
    return ", ".join(f"{k}={v}" if not isinstance(v, bool) else k for k, v in run.items() if k != "runtime")


# Two models sharing one session's feature-map memory (runtime v1's ActiveMemoryAllocator, static memory policy
# "1"/"2", checks/execution/v1.py session_peer): every other run loads one model into a fresh session, so the
# allocator's blocks were never reused by a second load nor kept for a remaining holder, and an unload that
# freed them while the other model still held them passed verify. The peer (zero copy the opposite way) is
# unloaded between the run's calls, or outlives the run and calls after the run's unload.
SESSION_PEER_MODELS = ("builtin:atomic_clean", "builtin:workspace_streams")
SESSION_PEER_RUNS = ({"runtime": "v1", "static_memory_policy": "2", "session_peer": 1, "calls": 2},
                     {"runtime": "v1", "static_memory_policy": "1", "zero_copy": False, "session_peer": 1})

# A caller's mistakes no other run makes (checks/execution/v1.py misalign, missing, after_unload), each refused
# call then retried on good buffers (the refusal must have left the model as it was): a device buffer off its
# element size's alignment (a runtime that no longer refused it faults on the device, EXEC-NO-FAULT); no buffer
# at all in an output's place (the call no longer matches the model's I/O one to one, CALL-INVALID-REFUSED);
# and a call after the unload (a runtime that ran it reads freed argument tables, EXEC-NO-FAULT).
CALLER_MISTAKE_MODELS = ("builtin:atomic_clean", "builtin:sized_inputs")


def _mistake_runs(graph) -> list[tuple[str, dict]]:
    """(label, run) of each caller's mistake on ``graph``, on its first input and output."""
    retried = {"runtime": "v1", "calls": 2, "retry": True}
    return [("misaligned input and output, then a retry", {**retried, "misalign": [graph.inputs[0], graph.outputs[0]]}),
            ("no buffer for an output, then a retry and a call after the unload",
             {**retried, "missing": [graph.outputs[0]], "after_unload": True})]


# An I/O buffer inside the work memory the caller gave the model (checks/execution/v1.py buffer_in_work_memory):
# that memory was allocated before the load, so no buffer claim judged it by the trace's allocations, and a
# runtime v1 that stopped refusing it wrote outputs into its own feature map with verify passing
# (CALL-INVALID-REFUSED). The second run puts it in the work memory after a move too, a live allocation the
# trace shows (V1-VALID-CALL-SUCCEEDS must not take that call for a valid one).
IN_WORK_MEMORY_MODELS = ("builtin:atomic_clean", "builtin:sized_inputs")
IN_WORK_MEMORY_RUNS = (
    ("input buffer in the work memory, a retry on fresh buffers",
     {"runtime": "v1", "work_memory": True, "buffer_in_work_memory": "input", "calls": 2, "retry": True}),
    ("output buffer in the work memory, which moves between calls",
     {"runtime": "v1", "work_memory": True, "feature_base_refreshable": True, "move_work": True, "calls": 2,
      "buffer_in_work_memory": "output"}),
)


# Executions whose caller's external allocator returns null on one request (out of memory), between two
# with a working allocator: the zoo's allocators otherwise never fail, so a v2 that used the null block or
# left the failed call's blocks behind passed verify (checks/execution/v2.py, EXEC-FAILED-CALL-NO-CHANGE).
# Both models make at least 3 requests a call: the first request fails, or the third, with blocks live.
EXTERNAL_ALLOC_MODELS = ("builtin:atomic_clean", "builtin:workspace_streams")
EXTERNAL_ALLOC_FAILS_AT = (1, 3)


# The zoo's kinds: what a graph alone makes a case of (other kinds draw their own subjects).
_ZOO_KINDS = ("plan", "model_file", "execution")


def case_runs(kind: str, graph, source: str = "", values: tuple[str, ...] = ()) -> dict:
    """The runs of an execution case. A graph imported from an ONNX file ``source`` (a zoo model's
    file too) is judged against onnxruntime on that file (its differential runs name it, with the
    inputs ``values`` froze); checks/execution/judge.py says what judges when onnxruntime cannot."""
    if kind != "execution":
        return {}
    light = source.startswith("zoo:")
    runs = default_runtimes(graph, light=light)
    path = zoo_path(source[4:]) if light else os.path.abspath(source) if source.endswith(".onnx") else None
    if path:
        frozen = dict(parse_value(v) for v in values)
        runs = [{**r, "onnx": path, "values": frozen} if r["runtime"] == "differential" else r for r in runs]
    return {"runs": runs}


# Device probes put the device's own bounds check, which EXEC-NO-FAULT trusts, to the test (DEVICE-BOUNDS).
PROBES = 8
# One probe more on each other SoC of the capability table: what a device of that SoC does (its allocation
# alignment: DEVICE-ALLOC-FIT reads the spec's own table) was seen only on the default SoC before, so a SoC
# profile that lost its alignment passed verify (a mutant of impl/platform/soc.py's nozc row).
PROBE_SOCS = ("ascend310p", "legacy", "nozc")


def device_cases(config):
    """(label, Scenario) for the device probes, when ``config.kinds`` has the device kind."""
    if "device" in config.kinds:
        for i, program in enumerate(fixed_programs(PROBES, config.seed)):
            yield (f"device probe {config.seed + i}",
                   Scenario("device", PROBE_GRAPH, CompileOptions(soc=config.soc), {"program": list(program)}))
        others = [soc for soc in PROBE_SOCS if soc != config.soc]
        for i, (soc, program) in enumerate(zip(others, fixed_programs(len(others), config.seed + PROBES))):
            yield (f"device probe {config.seed + PROBES + i} [{soc}]",
                   Scenario("device", PROBE_GRAPH, CompileOptions(soc=soc), {"program": list(program)}))
