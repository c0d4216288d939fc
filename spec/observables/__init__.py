"""Observables: what can be seen of a compiled or running model, as frozen values with a JSON form.

One module per artefact kind: ``api_call`` (one call into a runtime's API as its caller
saw it), ``input_file`` (a model file handed to a front end, and
the import's outcome), ``plan`` (the memory plan), ``model_file``
(header, regions, tasks, argument slots, the zero-copy offset table),
``load`` (options, the model's regions, its I/O), ``execution`` (user
buffers, slots after refresh, outputs) and ``trace`` (events). ``codec``
converts any of them to and from JSON. Nothing here imports ``impl``: impl
maps its state onto these, and any other implementation may do the same.
"""
from zcspec.spec.observables.api_call import ApiCallObservation, CallOutcome, OptionArgument
from zcspec.spec.observables.codec import dumps, from_data, loads, to_data
from zcspec.spec.observables.device import DeviceEvent, DeviceObservation
from zcspec.spec.observables.input_file import ImportOutcome, InputFileObservation, InputNode, InputTensor
from zcspec.spec.observables.execution import CallResult, ExecutionObservation, OutputResult, SlotValue, UserBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, LoadOptionsObservation, RegionBinding
from zcspec.spec.observables.model_file import (
    ArgSlot, BuildFacts, Header, LoadOutcome, ModelFileObservation, NodeInfo, SocProfile, Task, ZeroCopyEntry,
)
from zcspec.spec.observables.plan import (
    Alignment, Arena, Block, ByteCopy, ByteRange, ContinuousGroup, ContinuousOutputs, ExclusiveGroup, InPlaceStep, PlanAttributes,
    PlanObservation, PlacedTensor,
)
from zcspec.spec.observables.plan_contract import plan_from_contract, plan_to_contract
from zcspec.spec.observables.trace import Event, Range

OBSERVATION_KINDS = {
    "plan": PlanObservation,
    "model_file": ModelFileObservation,
    "load": LoadObservation,
    "execution": ExecutionObservation,
    "device": DeviceObservation,
    "input_file": InputFileObservation,
    "api_call": ApiCallObservation,
}

__all__ = [
    "ApiCallObservation", "CallOutcome", "OptionArgument",
    "DeviceEvent", "DeviceObservation",
    "Alignment", "Arena", "ArgSlot", "Block", "BuildFacts", "ByteCopy", "ByteRange", "InPlaceStep", "CallResult", "ContinuousGroup", "ContinuousOutputs", "ExclusiveGroup", "Event", "ExecutionObservation",
    "Header", "ImportOutcome", "InputFileObservation", "InputNode", "InputTensor", "IoTensor", "LoadObservation", "LoadOptionsObservation", "LoadOutcome", "ModelFileObservation",
    "NodeInfo", "OBSERVATION_KINDS", "OutputResult", "PlanAttributes", "PlanObservation", "Range", "RegionBinding",
    "SlotValue", "SocProfile", "Task", "PlacedTensor", "UserBuffer", "ZeroCopyEntry", "dumps", "from_data", "loads",
    "to_data", "plan_from_contract", "plan_to_contract",
]
