"""Memory groups: which tensors of a compiled model share one piece of memory, and for how long.

Runtime v2 gives memory to tensors at run time instead of using the plan's arena, but the
plan still says which tensors *share* memory: a view (Reshape, an outer-axis Split or
Slice), an in-place output and the pieces of a no-padding concat all carry ``alias_of``.
A :class:`Group` is one alias root with every tensor that resolves to it; each member sits
at ``rel`` = its plan offset minus the root's. The group needs ``size`` bytes (the plan's
padded sizes, what AllocMemory asks for) of which ``raw`` are really accessed (dense bytes).

``kind`` says where its memory comes from at run time:
- ``input``: the root is a model input and every member lies inside it, so the group
  lives in the caller's input buffer (SplitDataTensor shares it, GE's build_tensor.cc);
- ``const``: weights and fixed (variable) tensors, in memory loaded once;
- ``alloc``: everything else, allocated before its first task and released after its last.
  A model input that sits *inside* such a group (a piece of a no-padding concat, or an
  input whose aliases reach past its end) is listed in ``inputs_inside`` and copied in
  from the caller's buffer right after the allocation.
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.v2.errors import LoweringError


@attrs.frozen
class Member:
    tensor: str
    rel: int
    nbytes: int
    alias_of: str | None


@attrs.frozen
class Group:
    root: str
    kind: str
    region: str
    offset: int
    members: tuple[Member, ...] = attrs.field(converter=tuple)
    size: int = 0
    raw: int = 0
    first: int | None = None
    last: int | None = None
    streams: tuple[int, ...] = ()
    input_index: int | None = None
    inputs_inside: tuple[str, ...] = ()

    def member(self, tensor: str) -> Member:
        return next(m for m in self.members if m.tensor == tensor)


def _nbytes(model) -> dict[str, int]:
    out = {}
    for task in model.tasks.tasks:
        for s in task.slots:
            out[s.tensor] = s.nbytes
    for io in model.tasks.inputs + model.tasks.outputs:
        out[io.tensor] = io.nbytes
    return out


def _uses(model) -> dict[str, list[tuple[int, int]]]:
    """Tensor -> [(task index, stream), ...] of the tasks whose slots point at it."""
    out: dict[str, list] = {}
    for task in model.tasks.tasks:
        for s in task.slots:
            out.setdefault(s.tensor, []).append((task.index, task.stream))
    return out


def memory_groups(model) -> tuple[dict[str, Group], dict[str, str]]:
    """(root -> Group, tensor -> root) for every tensor a task or the I/O table refers to."""
    plan = model.plan
    tensors = {t.name: t for t in plan.tensors}
    nbytes, uses = _nbytes(model), _uses(model)
    inputs = {io.tensor: io.index for io in model.tasks.inputs}
    wanted = set(nbytes)
    for name in list(wanted):  # whole alias chains, so every link gets its own tensor data
        wanted.update(plan.chain(name, index=tensors))
    by_root: dict[str, list[str]] = {}
    root = plan.roots()
    for name in sorted(wanted):
        by_root.setdefault(root.get(name, name), []).append(name)
    groups = {root: _group(root, names, tensors, nbytes, uses, inputs) for root, names in by_root.items()}
    return groups, {name: root for root, names in by_root.items() for name in names}


def _group(root, names, tensors, nbytes, uses, inputs) -> Group:
    base = tensors[root]
    members = []
    for name in names:
        t = tensors[name]
        rel = t.offset - base.offset
        if t.region != base.region or rel < 0:
            raise LoweringError(f"lies at {t.region}+{t.offset}, before or outside its alias root "
                                f"{root!r} at {base.region}+{base.offset}", tensor=name)
        members.append(Member(name, rel, nbytes.get(name, t.size), t.alias_of))
    touched = [u for m in names for u in uses.get(m, ())]
    raw = max(m.rel + m.nbytes for m in members)
    inside = tuple(m.tensor for m in members if m.tensor in inputs)
    direct = root in inputs and raw <= nbytes[root] and inside == (root,)
    kind = "const" if base.region in ("weight", "fixed") else "input" if direct else "alloc"
    return Group(
        root, kind, base.region, base.offset, members,
        size=max(m.rel + tensors[m.tensor].size for m in members), raw=raw,
        first=min((i for i, _ in touched), default=None), last=max((i for i, _ in touched), default=None),
        streams=tuple(sorted({s for _, s in touched})), input_index=inputs.get(root) if direct else None,
        inputs_inside=() if direct else inside,
    )
