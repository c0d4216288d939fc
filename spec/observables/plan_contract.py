"""The plan file format, ``zcspec-plan`` version 1: the one reader and the one writer.

Every way a plan enters zcspec (``zcspec check``, ``zcspec replay``, ``zcspec spec --observation``,
``zcspec.check_plan``, the pytest plugin, ``zcspec.spec.observables.loads``) reads it here, and
every file zcspec writes (``zcspec import -o``, saved failures) is written here. The published
schema is spec/plan_schema.json (``zcspec schema``), described in docs/plan-format.md.

Reading is strict, because a reader that skips a misspelt key (``alais_of``, ``consumer``) certifies
a plan without the fact the user meant to give: every key must be one of the observation's fields
(spec/observables/plan.py) or one of the informational keys below, which no claim reads:

- top level: ``format`` (``"zcspec-plan"``) and ``version`` (1; both optional: a plan without them
  is read as version 1), ``planner``, ``source``, ``program`` (what made the plan, written by
  ``zcspec import -o``), ``strategy``, ``options``, ``branches`` (written by ``zcspec plan --json``).
  One of them is read after all: ``planner`` becomes the plan's ``planner``, whose documented
  alignment LAYOUT-ARENA-ALIGN holds the plan to (spec/capabilities.py PLANNERS);
- a tensor's ``batch`` and a block's ``parent`` (``zcspec plan --json``);
- ``attributes`` in the planner's form ``{memory_size, zero_copy_memory_size, inputs: [io],
  outputs: [io]}`` (``zcspec plan --json``), whose ``inputs``/``outputs`` also give
  ``graph_inputs``/``graph_outputs`` unless those are present.

Values are then checked as the observation is built (spec/observables/plan_values.py): negative or
overflowing bytes and steps outside ``order`` are bad input too.
"""
from __future__ import annotations

from typing import Any, Literal

import attrs

from zcspec.spec.errors import ObservationFormatError
from zcspec.spec.observables.codec import from_data, register_reader, to_data
from zcspec.spec.observables.plan import PlanObservation

FORMAT = "zcspec-plan"
VERSION = 1
SUPPORTED_VERSIONS = (1,)


@attrs.frozen
class Provenance:
    """The informational top-level keys: what made the plan. No claim reads them."""

    format: Literal["zcspec-plan"] = FORMAT
    version: int = VERSION
    planner: str | None = None
    source: str | None = None
    program: str | None = None
    strategy: str | None = None
    options: dict[str, Any] = attrs.field(factory=dict)
    branches: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen
class _TensorExtra:
    batch: str | None = None


@attrs.frozen
class _BlockExtra:
    parent: int | None = None


@attrs.frozen
class IoAttribute:
    """One graph input or output in the planner's form of ``attributes`` (``zcspec plan --json``)."""

    index: int
    node: str
    tensor: str
    region: str
    basic_offset: int
    is_zero_copy_block: bool
    relative_offsets: tuple[int, ...]


@attrs.frozen
class PlannerAttributes:
    memory_size: int
    zero_copy_memory_size: int
    inputs: tuple[IoAttribute, ...]
    outputs: tuple[IoAttribute, ...]


_PROVENANCE = frozenset(f.name for f in attrs.fields(Provenance))


def read_contract(data: Any) -> tuple[PlanObservation, Provenance]:
    """The plan and its provenance from parsed JSON; ObservationFormatError naming the JSON path of
    the first key or value that is not the format (ObservationConsistencyError for a value no plan
    can hold, see the module doc)."""
    if not isinstance(data, dict):
        raise ObservationFormatError(f"expected a plan object, got {type(data).__name__}", path="<root>")
    provenance = from_data(Provenance, {k: v for k, v in data.items() if k in _PROVENANCE})
    if provenance.version not in SUPPORTED_VERSIONS:
        raise ObservationFormatError(f"version {provenance.version} is not one this zcspec reads "
                                     f"({', '.join(map(str, SUPPORTED_VERSIONS))})", path="version")
    body = {k: v for k, v in data.items() if k not in _PROVENANCE}
    for key, extra in (("tensors", _TensorExtra), ("blocks", _BlockExtra)):
        if isinstance(body.get(key), list):
            body[key] = [_strip(extra, x, f"{key}[{i}]") for i, x in enumerate(body[key])]
    attributes = body.get("attributes")
    if isinstance(attributes, dict) and ("inputs" in attributes or "outputs" in attributes):
        body.update(_observed_attributes(from_data(PlannerAttributes, attributes, "attributes"), body))
    plan = from_data(PlanObservation, body)
    # ``planner`` is a top-level key of the file: the plan names its planner (spec/capabilities.py PLANNERS).
    return (attrs.evolve(plan, planner=provenance.planner) if provenance.planner else plan), provenance


def plan_from_contract(data: Any) -> PlanObservation:
    """The plan of parsed plan JSON (see :func:`read_contract`)."""
    return read_contract(data)[0]


register_reader(PlanObservation, plan_from_contract)


def plan_to_contract(plan: PlanObservation, provenance: Provenance = Provenance()) -> dict:
    """The JSON data of the format: ``format`` and ``version`` first, the provenance keys that are set,
    then every field of the plan."""
    if plan.planner and not provenance.planner:
        provenance = attrs.evolve(provenance, planner=plan.planner)
    head = {k: v for k, v in to_data(provenance).items() if v not in (None, {})}
    body = {k: v for k, v in to_data(plan).items() if k != "planner"}   # written once, with the provenance
    return {**head, "format": FORMAT, "version": VERSION, **body}


def _strip(extra: type, item: Any, path: str) -> Any:
    """A tensor or block without its informational keys (type-checked all the same)."""
    if not isinstance(item, dict):
        return item
    names = {f.name for f in attrs.fields(extra)}
    from_data(extra, {k: v for k, v in item.items() if k in names}, path)
    return {k: v for k, v in item.items() if k not in names}


def _observed_attributes(a: PlannerAttributes, body: dict) -> dict:
    for side, ios in (("inputs", a.inputs), ("outputs", a.outputs)):
        for i, x in enumerate(ios):
            bad = [v for v in (x.index, *x.relative_offsets) if v < 0]
            if bad:
                raise ObservationFormatError(f"{bad[0]} is negative: indices and offsets are at least 0",
                                             path=f"attributes.{side}[{i}]")
    out: dict[str, Any] = {"attributes": {
        "memory_size": a.memory_size, "zero_copy_memory_size": a.zero_copy_memory_size,
        "is_zero_copy_block": {x.tensor: x.is_zero_copy_block for x in a.inputs},
        "basic_offsets": {x.tensor: x.basic_offset for x in a.inputs + a.outputs}}}
    for key, side in (("graph_inputs", a.inputs), ("graph_outputs", a.outputs)):
        if key not in body:
            out[key] = [x.tensor for x in side]
    return out
