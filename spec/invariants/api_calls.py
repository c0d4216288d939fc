"""API calls: a call that misuses a runtime's API or ACL's is refused with GE's error and changes nothing (applies to API calls).

The converse of the claims that a valid call runs, for what the caller passes besides buffers (those are
CALL-INVALID-REFUSED's): a call on a model the caller already unloaded, buffer counts other than the model
file's I/O counts, a dynamic-batch label the model file does not have (or none where it has some, or one
where it has none), an option value outside the domain GE's declaration of it gives. Which calls misuse the
API is decided here from the observation alone (spec/observables/api_call.py): the model file's counts and
labels, the caller's own history and what it passed, against the table of option domains below. Nothing
asks the runtime whether it found the call wrong; a runtime that lets such a call through runs a model
whose argument tables it freed, binds buffers to the wrong I/O, or runs a branch nobody chose.
"""
from __future__ import annotations

from typing import Iterator

import attrs

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants.acl_arguments import ACL_SOURCE, Misuse, acl_misuses
from zcspec.spec.observables.api_call import ApiCallObservation

V1_SOURCE = "runtime/v1/graph/load/model_manager/"
V2_SOURCE = "runtime/v2/"


@attrs.frozen
class Domain:
    """An option's documented values: its type (``bool`` excludes int; ``int`` excludes bool) and, for an
    int, the values it may take (empty: any)."""

    type: str
    values: tuple[int, ...] = ()
    source: str = ""

    def why_not(self, arg) -> str | None:
        if arg.type != self.type:
            return f"a {arg.type} ({arg.value}), where GE declares a {self.type}"
        if self.values and arg.value not in {repr(v) for v in self.values}:
            return f"{arg.value}, where GE takes {' or '.join(map(str, self.values))}"
        return None


LOWERING_OPTION = "inc/graph_metadef/external/exe_graph/lowering/lowering_opt.h (LoweringOption: bool members)"
# Each runtime's load options by name (the zcspec-only switches zero_copy, ge_compat, legacy_copy_only_addrs
# and feature_base_refreshable are declared the same way as GE's). An option the table does not name is not
# judged.
OPTION_DOMAINS: dict[str, dict[str, Domain]] = {
    "v2": {name: Domain("bool", source=LOWERING_OPTION) for name in (
        "trust_shape_on_out_tensor", "always_zero_copy", "always_external_allocator", "enable_single_stream",
        "zero_copy", "ge_compat")},
    "v1": {
        "zero_copy": Domain("bool", source="zcspec's switch, declared as GE's bool switches"),
        "feature_base_refreshable": Domain("bool", source="ge_context.h (GetFeatureBaseRefreshable: a bool option)"),
        "legacy_copy_only_addrs": Domain("bool", source="zcspec's switch, declared as GE's bool switches"),
        "reuse_zero_copy_memory": Domain("int", (0, 1), source="acl model_config_om2.cpp CheckMdlLoadReuseZeroCopy "
                                                                "(ACL_MDL_WORKSPACE_MEM_OPTIMIZE takes 0 or 1)"),
    },
}
# GE's codes for a caller's mistake: ACL_ERROR_GE_PARAM_INVALID and ACL_ERROR_INVALID_PARAM
# (inc/external/ge/ge_error_codes.h, acl/acl_base.h); runtime v2's ge::PARAM_INVALID.
MISUSE_CODES = {"v1": ("145000", "100000"), "v2": ("PARAM_INVALID",)}
# What a refused call must not have done to the device.
_EFFECTS = ("alloc", "free", "copy", "arg_write", "launch")


def misuses(obs: ApiCallObservation) -> dict[str, Misuse]:
    """What misuses the API in this call: culprit -> Misuse (why, texts a refusal may name it by, the codes
    GE returns for it); an ACL entry point's by the ACL argument table (spec/invariants/acl_arguments.py)."""
    if obs.entry not in ("execute", "options"):
        return acl_misuses(obs)
    codes = MISUSE_CODES[obs.runtime]
    out: dict[str, Misuse] = {}
    if obs.entry == "options":
        domains = OPTION_DOMAINS.get(obs.runtime, {})
        for arg in obs.options:
            if arg.name in domains and (why := domains[arg.name].why_not(arg)):
                out[f"option {arg.name}"] = Misuse(f"option {arg.name} is {why}", (arg.name,), codes)
        return out
    if obs.unloaded:
        out["model"] = Misuse(f"the caller unloaded model {obs.model!r} before the call", (obs.model, "unload"), codes)
    if (obs.input_buffers, obs.output_buffers) != (obs.model_inputs, obs.model_outputs):
        out["buffers"] = Misuse(f"{obs.input_buffers} input and {obs.output_buffers} output buffers for a model file "
                                f"with {obs.model_inputs} inputs and {obs.model_outputs} outputs",
                                (str(obs.input_buffers), str(obs.output_buffers)), codes)
    labels = obs.branch_labels
    if labels and obs.batch not in labels:
        chosen = "no batch" if obs.batch is None else f"batch {obs.batch!r}"
        out["batch"] = Misuse(f"{chosen}, where the model file's branches are {list(labels)}",
                              ("batch",) + ((obs.batch,) if obs.batch else ()), codes)
    elif not labels and obs.batch is not None:
        out["batch"] = Misuse(f"batch {obs.batch!r} for a model file with no dynamic-batch branches",
                              ("batch", obs.batch), codes)
    return out


def _listed(found: dict) -> str:
    return "; ".join(m.why for m in found.values())


def _refused(obs: ApiCallObservation) -> Iterator:
    found = misuses(obs)
    if not found:
        return
    culprit = f"{obs.runtime} {obs.entry} call"
    if obs.outcome.ok:
        yield violation(culprit, f"returned although it misuses the API: {_listed(found)}", misuses=sorted(found))
        return
    codes = tuple(dict.fromkeys(c for m in found.values() for c in m.codes))
    if obs.outcome.code not in codes:
        yield violation(culprit, f"was refused with code {obs.outcome.code or '(none)'!r} "
                        f"({', '.join(obs.outcome.error[:1])}), not GE's caller error {' or '.join(codes)} "
                        f"(it misuses the API: {_listed(found)})", code=obs.outcome.code)
    elif not any(name and name in obs.outcome.message for m in found.values() for name in m.names):
        yield violation(culprit, f"was refused, but its message names none of the misuses ({_listed(found)}): "
                        f"{obs.outcome.message!r}")


def _misused(obs: ApiCallObservation) -> bool:
    return bool(misuses(obs))


REFUSED = Invariant(
    id="API-MISUSE-REFUSED",
    title="A call that misuses the API is refused with GE's caller error, naming the misuse",
    statement="An execute call on a model the caller had unloaded, with buffer counts other than the model file's "
              "I/O counts, or with a dynamic-batch label the model file does not have (none where it has branches, "
              "one where it has none), and a load-option value outside the domain GE declares for it (a bool "
              "switch given anything but a bool, reuseZeroCopyMemory anything but 0 or 1), is refused: it raises "
              "the runtime's error with GE's code for a caller's mistake (v1: ACL_ERROR_GE_PARAM_INVALID 145000 "
              "or ACL_ERROR_INVALID_PARAM 100000; v2: PARAM_INVALID), whose message names the misuse (the option, "
              "the model, the batch, or the counts). So is a call to one of ACL's C entry points whose arguments "
              "fall outside ACL's domain for them, as the trace and the caller's own loads show it (a size that is "
              "not positive, a pointer null or in no live allocation, a memcpy past destMax or against its kind's "
              "address spaces, an unknown config attribute or value, a model id the caller does not hold, datasets "
              "that do not match the model file): with the code ACL returns for that misuse (ACL_ERROR_INVALID_PARAM "
              "100000 or ACL_ERROR_GE_PARAM_INVALID 145000, spec/invariants/acl_arguments.py).",
    rationale="Every claim about a call that ran assumes the call was well formed. A runtime that runs a model "
              "after its unload reads argument tables it freed; one that binds a short list of buffers leaves an "
              "output to whatever its slot held; one that accepts an unknown batch runs no branch or the wrong "
              "one; an option that is not the bool the runtime tests may switch a mode on by accident. Which calls "
              "misuse the API is decided from the model file and what the caller passed, never from the "
              "runtime's own checks.",
    ge_source=(V1_SOURCE + "model_manager.cc (ModelManager::GetModel: a model id no longer loaded, the caller's "
               "parameter error); davinci_model.cc (DavinciModel::NnExecute: the number of inputs or outputs the user "
               "provided, message E13025); the v2 executor's Execute (ModelV2Executor, PARAM_INVALID for the "
               "argument counts); " + LOWERING_OPTION + "; api/acl/acl_model/model/model_config_om2.cpp "
               "(CheckMdlLoadReuseZeroCopy: 0 or 1); " + ACL_SOURCE),
    applies_to="api_call", concern="api_calls", predicate=_refused, precondition=_misused,
)


def _changed_nothing(obs: ApiCallObservation) -> Iterator:
    if not misuses(obs) or obs.outcome.ok:
        return
    culprit = f"{obs.runtime} {obs.entry} call"
    done = [e for e in obs.events if e.kind in _EFFECTS]
    if done:
        e = done[0]
        yield violation(culprit, f"misuses the API and was refused, yet during the call the device recorded "
                        f"{len(done)} effect(s), the first a {e.kind} (event {e.seq})", event=e.seq)
    for name in obs.buffers_changed:
        yield violation(f"buffer {name!r}", f"holds other bytes after the refused {obs.entry} call, which misuses the "
                        f"API ({_listed(misuses(obs))})")


def _refused_misuse(obs: ApiCallObservation) -> bool:
    return bool(misuses(obs)) and not obs.outcome.ok


CHANGES_NOTHING = Invariant(
    id="API-MISUSE-CHANGES-NOTHING",
    title="A refused misuse changed nothing",
    statement="A call that misuses the API (as API-MISUSE-REFUSED finds it) and is refused leaves no allocation, "
              "free, copy, argument write or kernel launch in the device trace during the call, and every buffer "
              "the caller passed holds the bytes it held before.",
    rationale="A caller retries a refused call after fixing it; a refusal that came after the runtime had "
              "allocated, launched or written the caller's outputs leaks memory or hands back half-written "
              "buffers with an error code that says nothing happened. GE checks the call before it touches the "
              "device.",
    ge_source=(V1_SOURCE + "davinci_model.cc (DavinciModel::NnExecute: its inputs checked before "
               "DavinciModel::CopyModelData and the launch); the v2 executor's Execute (ModelV2Executor: its "
               "arguments checked before the execution graph runs)"),
    applies_to="api_call", concern="api_calls", predicate=_changed_nothing, precondition=_refused_misuse,
)


INVARIANTS = (REFUSED, CHANGES_NOTHING)
