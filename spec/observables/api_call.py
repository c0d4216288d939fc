"""One call into a runtime's API, as its caller saw it: what it passed, what it knew, what came back.

The caller transcribes the call from its own side and from the device trace, never from the runtime's
record of it (a call the runtime refused before it began has no record, and one it wrongly accepted may
have none either): the entry point (``execute``, or ``options``: building the runtime's load options),
the model's I/O counts and dynamic-batch labels as its model file states them, whether the caller had
unloaded the model before the call, what it passed (buffer counts, the batch label, each option as a
name, the Python type of its value and the value's text), the outcome (returned, or the error's class
names, GE code and message), the device trace's events during the call, and which of the caller's buffers
hold other bytes after it (the caller read them before and after). The claims of
spec/invariants/api_calls.py decide from these alone whether the call misused the API and whether the
runtime refused it as GE does.
"""
from __future__ import annotations

from typing import Literal

import attrs

from zcspec.spec.observables.trace import Event

# ``execute`` and ``options``: a runtime's own API (v1's LoadedModel.execute, v2's executor, their load
# options); the others: ACL's C entry points by their C names (spec/invariants/acl_arguments.py).
Entry = Literal["execute", "options", "aclrtMalloc", "aclrtFree", "aclrtMemcpy", "aclmdlQuerySizeFromMem",
                "aclmdlLoadFromMem", "aclmdlLoadFromMemWithMem", "aclmdlSetConfigOpt", "aclmdlLoadWithConfig",
                "aclmdlExecute", "aclmdlSetDynamicBatchSize", "aclmdlUnload"]


@attrs.frozen
class OptionArgument:
    """One option as the caller passed it: ``type`` is its value's Python type name (``bool``, ``int``,
    ``str``, ``NoneType``...), ``value`` the value's ``repr``."""

    name: str
    type: str
    value: str


@attrs.frozen
class DataBufferArgument:
    """One data buffer of an ACL dataset the call passed: ``dataset`` is the argument's name (``inputs`` or
    ``outputs``), ``address`` and ``size`` what aclCreateDataBuffer was given."""

    dataset: str
    address: int
    size: int


@attrs.frozen
class CallOutcome:
    """``ok``: the call returned; otherwise ``error`` is the error's class name and its bases (most derived
    first), ``code`` the GE/ACL code it carries as text (``"145000"``, ``"PARAM_INVALID"``; ``""``: none),
    ``message`` its text."""

    ok: bool
    error: tuple[str, ...] = ()
    code: str = ""
    message: str = ""


@attrs.frozen
class ApiCallObservation:
    """``runtime``: ``"v1"`` or ``"v2"`` (GE's codes differ). ``model_inputs``/``model_outputs``: the model
    file's I/O counts; ``branch_labels``: its dynamic-batch labels (empty: none). ``unloaded``: the caller
    had unloaded the model before this call. ``input_buffers``/``output_buffers``: how many buffers the call passed (an
    ``options`` call passes none); ``batch``: the label passed (None: none). ``events``: the device trace
    during the call. ``buffers_changed``: the caller's buffers whose bytes differ after the call.

    An ACL call also carries ``arguments`` (each scalar argument by its C name, as ``options`` are given:
    a model's bytes as ``modelSize``, a config handle's attributes as ``options``), ``datasets`` (the data
    buffers of its dataset arguments), ``allocations`` (the device trace's alloc and free events from the
    device's start to the call: what is live when it begins) and ``loaded`` (the model ids the caller's own
    loads returned and its unloads have not given back); the model fields then describe the model file the
    call's ``modelId`` was loaded from (none: an id the caller does not hold)."""

    name: str
    runtime: Literal["v1", "v2"]
    entry: Entry
    outcome: CallOutcome
    model: str = ""
    model_inputs: int = 0
    model_outputs: int = 0
    branch_labels: tuple[str, ...] = ()
    unloaded: bool = False
    input_buffers: int = 0
    output_buffers: int = 0
    batch: str | None = None
    options: tuple[OptionArgument, ...] = ()
    events: tuple[Event, ...] = ()
    buffers_changed: tuple[str, ...] = ()
    arguments: tuple[OptionArgument, ...] = ()
    datasets: tuple[DataBufferArgument, ...] = ()
    allocations: tuple[Event, ...] = ()
    loaded: tuple[int, ...] = ()

    def argument(self, name: str) -> OptionArgument | None:
        return next((a for a in self.arguments if a.name == name), None)
