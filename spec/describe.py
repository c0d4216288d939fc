"""Short, readable text of an observation for the spec document: plan rows, trace events, slots.

Fields at their default values are left out, so an example shows only what
it is about. Addresses are printed in hex, sizes in decimal bytes.
"""
from __future__ import annotations

import attrs

from zcspec.spec.observables import (
    Alignment, BuildFacts, ExecutionObservation, LoadObservation, ModelFileObservation, PlanObservation,
)
from zcspec.spec.observables.api_call import ApiCallObservation
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.observables.input_file import InputFileObservation
from zcspec.spec.observables.trace import Event

_HEX = {"address", "src", "dst", "value", "model_address"}


def describe(obs) -> str:
    if isinstance(obs, PlanObservation):
        return _plan(obs)
    if isinstance(obs, ModelFileObservation):
        return _model_file(obs)
    if isinstance(obs, ExecutionObservation):
        return _execution(obs)
    if isinstance(obs, LoadObservation):
        return "\n".join(_load(obs))
    if isinstance(obs, DeviceObservation):
        return _device(obs)
    if isinstance(obs, InputFileObservation):
        return _input_file(obs)
    if isinstance(obs, ApiCallObservation):
        return _api_call(obs)
    raise TypeError(f"cannot describe a {type(obs).__name__}")


def _plan(p: PlanObservation) -> str:
    head = ("tensor", "region", "offset", "size", "aligned", "steps", "block", "alias_of")
    rows = [head] + [(t.name, t.region, str(t.offset), str(t.size), str(t.aligned_size), f"{t.first}..{t.last}",
                      str(t.block), t.alias_of or "") for t in p.tensors]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append("regions: " + ", ".join(f"{k}={v}" for k, v in p.regions.items())
                 + f"; lower_bound={p.lower_bound}; naive={p.naive}; steps={len(p.order)}")
    facts = [("attributes", p.attributes and _fields(p.attributes)),
             ("graph_inputs", " ".join(p.graph_inputs)), ("graph_outputs", " ".join(p.graph_outputs)),
             ("consumers", ", ".join(f"{k}@{','.join(map(str, v))}" for k, v in p.consumers.items())),
             ("atomic", " ".join(p.atomic)), ("fixed", " ".join(p.fixed)),
             ("continuous_groups", ", ".join(f"{g.consumer}({', '.join(g.tensors)})"
                                              + ("" if g.padding else " nopadding") for g in p.continuous_groups)),
             ("workspaces", ", ".join(f"{k} of {v}" for k, v in p.workspaces.items())),
             ("alignment", "" if p.alignment == Alignment() else _fields(p.alignment))]
    lines += [f"{k}: {v}" for k, v in facts if v]
    return "\n".join(lines)


def _value(name: str, v) -> str:
    if name in _HEX and isinstance(v, int):
        return hex(v)
    if isinstance(v, tuple) and v and attrs.has(type(v[0])):
        return "[" + ", ".join(_fields(x) for x in v) + "]"
    return str(v) if not isinstance(v, str) else v


def _fields(obj) -> str:
    """name=value for every field not at its default."""
    parts = []
    for f in attrs.fields(type(obj)):
        v = getattr(obj, f.name)
        default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default
        if v == default and default is not attrs.NOTHING:
            continue
        parts.append(f"{f.name}={_value(f.name, v)}")
    return " ".join(parts)


def _model_file(mf: ModelFileObservation) -> str:
    lines = [f"header: {_fields(mf.header)}"]
    if mf.load is not None:
        lines.append(f"load: {_fields(mf.load)}")
    if mf.regions:
        lines.append("regions: " + ", ".join(f"{k}={v}" for k, v in mf.regions.items()))
    lines += [f"task {t.id} ({t.kind}{', node ' + t.node if t.node else ''}{', in a loop' if t.in_loop else ''})"
              + (f" slot {s.index}: {s.region}+{s.offset}, {s.size} bytes" if s else "")
              for t in mf.tasks for s in (t.slots or (None,))]
    lines += [f"zero-copy entry: {_fields(e)}" for e in mf.zero_copy_table]
    lines += [f"node {n.name}: {n.type}" + (f"({', '.join(n.inputs)})" if n.inputs else "")
              + (" [view]" if n.view else "") for n in mf.nodes]
    if mf.soc is not None:
        lines.append(f"soc: {_fields(mf.soc)}")
    if mf.build != BuildFacts():
        lines.append(f"build: {_fields(mf.build)}")
    return "\n".join(lines)


def _load(ld: LoadObservation) -> list[str]:
    lines = [f"options: {_fields(ld.options)}"]
    lines += [f"region {r.name}: {hex(r.address)}, {r.size} bytes" + ("" if r.backed else " (not backed)")
              for r in ld.regions]
    lines += [f"io {t.name}: {_fields(t)}" for t in ld.io]
    lines += [f"zero-copy entry: task {e.task} slot {e.slot} -> {e.io} + {e.relative_offset}"
              for e in ld.zero_copy_table]
    if ld.copy_only:
        lines.append("copy_only: " + " ".join(ld.copy_only))
    lines += [_event(e) for e in ld.events]
    return lines


def _event(e: Event) -> str:
    parts = [f"#{e.seq} {e.kind}"]
    for f in attrs.fields(Event):
        if f.name in ("seq", "kind"):
            continue
        v = getattr(e, f.name)
        if v is None or v == ():
            continue
        if f.name in ("reads", "writes"):
            v = " ".join(f"[{hex(r.address)}, +{r.size})" for r in v)
        parts.append(f"{f.name}={_value(f.name, v)}")
    return " ".join(parts)


def _execution(obs: ExecutionObservation) -> str:
    lines = _load(obs.load)
    lines += [f"buffer {b.name}: {b.role} at {hex(b.address)}, {b.size} bytes, {b.placement}" for b in obs.buffers]
    lines += [f"slot task {s.task} #{s.index} = {hex(s.value)}" for s in obs.slots]
    if obs.io_addresses:
        lines.append("io_addresses: " + " ".join(f"{k}={hex(v)}" for k, v in obs.io_addresses.items()))
    lines += [_event(e) for e in obs.events]
    lines += [f"output {o.name}: {_fields(o)}" for o in obs.outputs]
    lines.append("result: " + ("ok" if obs.result.ok else f"error ({_fields(obs.result)})"))
    return "\n".join(lines)


def _device(obs: DeviceObservation) -> str:
    lines = [f"device memory: [{hex(obs.memory.address)}, +{obs.memory.size})"] if obs.memory else []
    lines += [f"soc: {obs.soc}"] if obs.soc else []
    for e in obs.events:
        if e.kind == "alloc" and e.refused:
            lines.append(f"#{e.seq} alloc of {e.size} bytes: refused ({e.refused})")
        elif e.kind == "alloc":
            lines.append(f"#{e.seq} alloc {hex(e.address or 0)}, {e.size} bytes" + (" read-only" if e.read_only else ""))
        elif e.kind == "free":
            lines.append(f"#{e.seq} free {hex(e.address or 0)}" + (f": refused ({e.refused})" if e.refused else ""))
        else:
            ranges = [f"{what} [{hex(r.address)}, +{r.size})" for what, rs in (("read", e.reads), ("write", e.writes))
                      for r in rs]
            lines.append(f"#{e.seq} task {e.task}: {', '.join(ranges) or 'no ranges'}: "
                         + (f"refused ({e.refused})" if e.refused else "ran"))
    for r in obs.oracle_runs:
        oracle = r.oracle_error.splitlines()[0][:80] if r.oracle_error else [list(o.shape) for o in r.oracle]
        lines.append(f"oracle step {r.step} {r.op_type} {r.attrs} on {[list(t.shape) for t in r.inputs]} into "
                     f"{[list(t.shape) for t in r.outs]}: " + (f"refused ({r.refused})" if r.refused else "ran")
                     + f"; onnxruntime: {oracle}")
    return "\n".join(lines)


def _input_file(obs: InputFileObservation) -> str:
    lines = [f"{obs.format} file {obs.file}" + (f", opset {obs.opset}" if obs.opset else "")]
    facts = [("graph inputs", " ".join(obs.graph_inputs)), ("constants", " ".join(obs.constants)),
             ("graph outputs", " ".join(obs.graph_outputs)),
             ("shapes", ", ".join(f"{t.name} {list(t.dims) if t.dims is not None else 'none'}" for t in obs.shaped)),
             ("shapes given", " ".join(obs.shapes_given)),
             ("listed twice", ", ".join(f"{what} {name}" for what, name in obs.duplicates))]
    lines += [f"{k}: {v}" for k, v in facts if v]
    for n in obs.nodes:
        op = f"{n.domain}:{n.op_type}" if n.domain else n.op_type
        waits = f" after {', '.join(n.control_inputs)}" if n.control_inputs else ""
        lines.append(f"node {n.name or '(unnamed)'} {op}({', '.join(n.inputs)}) -> {', '.join(n.outputs)}{waits}")
    lines.append("import: accepted" if obs.outcome.accepted
                 else f"import: refused ({obs.outcome.error[0] if obs.outcome.error else 'error'}: {obs.outcome.message})")
    return "\n".join(lines)


def _api_call(obs: ApiCallObservation) -> str:
    lines = [f"{obs.runtime} {obs.entry} call {obs.name}"]
    if obs.entry == "execute":
        labels = f", batch labels {list(obs.branch_labels)}" if obs.branch_labels else ""
        lines.append(f"model {obs.model}: {obs.model_inputs} inputs, {obs.model_outputs} outputs{labels}"
                     + (" (unloaded by the caller before the call)" if obs.unloaded else ""))
        lines.append(f"passed: {obs.input_buffers} inputs, {obs.output_buffers} outputs"
                     + (f", batch {obs.batch!r}" if obs.batch is not None else ""))
    lines += [f"argument {a.name} = {a.value} ({a.type})" for a in obs.arguments]
    lines += [f"option {a.name} = {a.value} ({a.type})" for a in obs.options]
    lines += [f"{b.dataset}: data buffer of {b.size} bytes at {b.address:#x}" for b in obs.datasets]
    if obs.entry not in ("execute", "options"):
        lines.append(f"the caller holds model ids {list(obs.loaded)}; {len(obs.allocations)} allocation events "
                     "before the call")
    lines.append("returned" if obs.outcome.ok else f"refused ({', '.join(obs.outcome.error[:1]) or 'error'}, code "
                 f"{obs.outcome.code or '(none)'}: {obs.outcome.message})")
    lines += [_event(e) for e in obs.events]
    if obs.buffers_changed:
        lines.append(f"buffers changed: {', '.join(obs.buffers_changed)}")
    return "\n".join(lines)
