"""Calls to ACL's C entry points (impl/runtime/acl.py), transcribed from the caller's side as API-call
observations (spec/observables/api_call.py), so that the API-misuse claims judge them.

``Transcribing(acl, device, held, models)`` stands in for the facade: each entry point it is called through
(``rt_malloc`` as ``aclrtMalloc``, ``mdl_execute`` as ``aclmdlExecute``, ...) runs on the real facade, and
its call is transcribed into ``last``: the arguments by their C names (a model's bytes as ``modelSize``, a
config handle's attributes as ``options``, a dataset's data buffers as ``datasets``), the device trace's
allocations and frees before the call and its events during it, the caller's buffers whose bytes changed
(``held``: (name, address, size, placement) of each, read before and after), the model ids the caller's
own loads returned and its unloads have not given back, and the outcome as the caller got it. The
helpers the facade offers to build arguments (datasets, data buffers, config handles) pass through
untranscribed. Nothing here asks the facade whether a call was right.
"""
from __future__ import annotations

import inspect
from typing import Callable

import attrs

from zcspec.checks.execution.api_misuse import labels_of, outcome_of, read_buffers
from zcspec.impl.device.trace_events import TraceNames, allocation_events, spec_events
from zcspec.impl.runtime import acl as acl_api
from zcspec.spec.observables.api_call import ApiCallObservation, DataBufferArgument, OptionArgument

_NAMES = TraceNames(tasks={})
# facade method -> (the C entry point, the C names of its parameters in order)
ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rt_malloc": ("aclrtMalloc", ("size",)),
    "rt_free": ("aclrtFree", ("devPtr",)),
    "rt_memcpy": ("aclrtMemcpy", ("dst", "destMax", "src", "count", "kind")),
    "mdl_query_size_from_mem": ("aclmdlQuerySizeFromMem", ("modelSize",)),
    "mdl_load_from_mem": ("aclmdlLoadFromMem", ("modelSize", "zero_copy")),
    "mdl_load_from_mem_with_mem": ("aclmdlLoadFromMemWithMem",
                                   ("modelSize", "workPtr", "workSize", "weightPtr", "weightSize")),
    "mdl_set_config_opt": ("aclmdlSetConfigOpt", ("handle", "attr", "value")),
    "mdl_load_with_config": ("aclmdlLoadWithConfig", ("handle",)),
    "mdl_execute": ("aclmdlExecute", ("modelId", "inputs", "outputs")),
    "mdl_set_dynamic_batch": ("aclmdlSetDynamicBatchSize", ("modelId", "inputs", "batch")),
    "mdl_unload": ("aclmdlUnload", ("modelId",)),
}
_LOADS = ("mdl_load_from_mem", "mdl_load_from_mem_with_mem", "mdl_load_with_config")


def argument(name: str, value) -> OptionArgument:
    """One argument as the caller passed it; bytes by their length (what a C caller passes beside the pointer)."""
    if isinstance(value, (bytes, bytearray)):
        return OptionArgument(name, "bytes", str(len(value)))
    return OptionArgument(name, type(value).__name__, repr(value))


@attrs.frozen
class _Passed:
    """A call's arguments as the observation holds them."""

    arguments: tuple[OptionArgument, ...] = ()
    options: tuple[OptionArgument, ...] = ()
    datasets: tuple[DataBufferArgument, ...] = ()
    batch: str | None = None


def _passed(method: str, args: tuple, kwargs: dict) -> _Passed:
    _, c_names = ENTRIES[method]
    bound = inspect.signature(getattr(acl_api.Acl, method)).bind(None, *args, **kwargs)
    values = list(bound.arguments.values())[1:]
    arguments, options, datasets, batch = [], [], [], None
    for name, value in zip(c_names, values):
        if isinstance(value, acl_api.ConfigHandle):
            options += [argument(k, v) for k, v in value.opts.items()]
        elif isinstance(value, acl_api.Dataset):
            datasets += [DataBufferArgument(name, b.addr, b.size) for b in value.buffers]
            batch = value.batch if batch is None else batch
        elif name == "batch":
            batch = value
        else:
            arguments.append(argument(name, value))
    return _Passed(tuple(arguments), tuple(options), tuple(datasets), batch)


class Transcribing:
    """The ACL facade ``acl`` of ``device``, each entry-point call transcribed into ``last``. ``held``: the
    caller's buffers, (name, address, size, placement); ``models``: model id -> the model it loaded."""

    def __init__(self, acl, device, held: list, models: dict):
        self._acl, self._device, self._held, self._models = acl, device, held, dict(models)
        self.last: ApiCallObservation | None = None

    def __getattr__(self, method: str):
        real = getattr(self._acl, method)
        if method not in ENTRIES:
            return real
        return lambda *args, **kwargs: self._call(method, real, args, kwargs)

    def _call(self, method: str, real: Callable, args: tuple, kwargs: dict):
        entry, _ = ENTRIES[method]
        passed = _passed(method, args, kwargs)
        model_id = next((int(a.value) for a in passed.arguments if a.name == "modelId" and a.type == "int"), None)
        model = self._models.get(model_id)
        trace = self._device.trace
        before, begin = read_buffers(self._device, self._held), trace.mark()
        result, error = None, None
        try:
            result = real(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - re-raised below: the caller gets what the facade gave
            error = e
        end, after = trace.mark(), read_buffers(self._device, self._held)
        self.last = ApiCallObservation(
            name=entry, runtime="v1", entry=entry, outcome=outcome_of(error),
            model="" if model is None else model.name,
            model_inputs=0 if model is None else len(model.tasks.inputs),
            model_outputs=0 if model is None else len(model.tasks.outputs),
            branch_labels=() if model is None else labels_of(model),
            batch=passed.batch, options=passed.options, arguments=passed.arguments, datasets=passed.datasets,
            events=tuple(spec_events(trace, (begin, end), _NAMES)),
            allocations=tuple(allocation_events(trace, (0, begin), _NAMES)),
            loaded=tuple(sorted(self._models)),
            buffers_changed=tuple(sorted(k for k in before if before[k] != after.get(k))))
        if error is not None:
            raise error
        if method in _LOADS:
            self._models[result] = None
        elif method == "mdl_unload":
            self._models.pop(model_id, None)
        return result
