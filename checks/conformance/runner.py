"""One ONNX node test through zcspec: import, compile, run on runtime v1 and v2, compare.

``run_case(case) -> Result``, whose ``status`` is

- ``pass``: both runtimes give every expected output (same shape and dtype, values within the
  case's rtol/atol, NaNs where expected: ONNX's backend runner's comparison);
- ``refused``: the front end or the compiler raised a ``BadInput`` whose message names a feature
  the op table lists as unsupported (``zcspec.impl.compiler.op_limits``);
- ``fail``: anything else: wrong numbers, a wrong shape or dtype, any other exception (a crash),
  or a refusal that names no listed feature (an unexplained refusal is a bug as well).

The import fixes every input's shape from the test data, as ``--shape`` would. A case runs two ways
(``run_both``): *as the file is*, every graph input an input of the compiled model, fed the test's
values at run time (``run_case(case, freeze=False)``); and *frozen* (``run_case(case)``): when the
import is refused because an operand the static IR needs is computed from graph inputs known only
at run time (a ``RuntimeValueError``, or any refusal carrying ``inputs``), the case is imported again
with those inputs frozen to the test's values, as ``--value`` would, and ``Result.frozen`` names them:
the compiled model is then specialised to those values, and the case tests the op's semantics for
them. Operands that decide only values (Clip's min/max, ...) stay run-time inputs, so as the files
are, a case is refused only where an operand deciding a shape, a size or the task list is one.
The compiled model goes through the model file (encode, load) as a ``.zcm`` would, and each runtime
executes it once with zero copy on, on its own device.
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.checks.conformance.cases import Case
from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.compile import compile as compile_model
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v2.runner import run as run_v2

STATUSES = ("pass", "refused", "fail")
RUNTIMES = ("v1", "v2")
MAX_FREEZES = 4  # re-imports with more inputs frozen; each refusal names the inputs it needs
RUNTIME_VALUE = op_limits.find(op_limits.ANY_OP, "runtime-value").feature


@attrs.frozen
class Result:
    """``stage`` is where the case ended: ``import``, ``compile``, ``v1``, ``v2`` or ``done``."""

    name: str
    op_types: tuple[str, ...]
    status: str
    stage: str
    detail: str = ""
    frozen: tuple[str, ...] = ()
    feature: str = ""   # the listed unsupported feature a refusal names
    refused_op: str = ""   # the op type of the node a run-time operand refusal names

    @property
    def runtime_operand(self) -> bool:
        """Refused because an operand that decides a shape, a size or the task list is a run-time input."""
        return self.status == "refused" and self.feature == RUNTIME_VALUE

    def as_dict(self) -> dict:
        return attrs.asdict(self)


def named_feature(case: Case, error: BaseException) -> str | None:
    """The feature ``op_limits`` lists as unsupported for the case's ops that ``error`` (a refusal)
    names, the longest if several match; None when it names none."""
    text = str(error)
    named = [f for f in op_limits.features(case.op_types) if f in text]
    return max(named, key=lambda f: (len(f), f)) if named else None


def import_case(case: Case, frozen: dict, *, freeze: bool = True):
    """The IR graph, freezing the inputs each refusal asks for (see the module docstring); with
    ``freeze`` False, the graph as the file is, or the refusal."""
    arrays = dict(zip(case.input_names, case.inputs))
    for _ in range(MAX_FREEZES + 1 if freeze else 1):
        shapes = {n: tuple(a.shape) for n, a in arrays.items() if isinstance(a, np.ndarray) and n not in frozen}
        try:
            return from_model(case.model, shapes=shapes, values=dict(frozen) or None)
        except BadInput as e:
            wanted = [i for i in getattr(e, "inputs", ()) if i in arrays and i not in frozen]
            if not wanted or not freeze:
                raise
            frozen.update((i, arrays[i]) for i in wanted)
    raise AssertionError("unreachable: MAX_FREEZES re-imports")


def execute(runtime: str, model, feed: dict) -> dict:
    """The outputs (name -> array) of one run of the loaded ``model`` on ``runtime`` ("v1" or "v2") with ``feed``."""
    device = Device(model.soc, trace=False)
    inputs = stage_inputs(device, model, {io.tensor: feed[io.tensor] for io in model.tasks.inputs})
    outputs = alloc_outputs(device, model)
    try:
        if runtime == "v1":
            loaded = load(device, model, LoadOptions(zero_copy=True))
            try:
                loaded.execute(inputs, outputs)
            finally:
                loaded.unload()
        else:
            run_v2(model, device, inputs, outputs, zero_copy=True)
        return read_outputs(device, model, outputs)
    finally:
        free_buffers(device, inputs + outputs)


def _comparable(a: np.ndarray) -> np.ndarray:
    # numpy cannot compare bfloat16 and the 8-bit floats with a Python float: widen them, as the runner does.
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def mismatch(case: Case, got: dict) -> str:
    """Why ``got`` (output name -> array) differs from the case's expected outputs; "" when it does not."""
    for name, want in zip(case.output_names, case.outputs):
        if name not in got:
            return f"output {name!r} is missing (the model gives {sorted(got)})"
        have = got[name]
        if have.shape != want.shape or have.dtype != want.dtype:
            return f"output {name!r} is {have.dtype}{list(have.shape)}, expected {want.dtype}{list(want.shape)}"
        try:
            np.testing.assert_allclose(_comparable(have), _comparable(want), rtol=case.rtol, atol=case.atol)
        except AssertionError as e:
            lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
            return f"output {name!r}: " + "; ".join(lines[1:4])
    return ""


def run_case(case: Case, *, soc: str = "ascend910b", freeze: bool = True) -> Result:
    """Run ``case``, frozen where the import asks, or with ``freeze`` False as the file is (see the
    module docstring)."""
    frozen: dict = {}
    stage = "import"
    try:
        graph = import_case(case, frozen, freeze=freeze)
        stage = "compile"
        model = load_model(compile_model(graph, CompileOptions(soc=soc)))
    except BadInput as e:
        feature = named_feature(case, e)
        if feature:
            return Result(case.name, case.op_types, "refused", stage, str(e), tuple(frozen), feature,
                          getattr(e, "op_type", ""))
        return Result(case.name, case.op_types, "fail", stage,
                      f"refused without naming a listed unsupported feature: {type(e).__name__}: {e}", tuple(frozen))
    except Exception as e:  # a crash of the front end or the compiler is a bug
        return Result(case.name, case.op_types, "fail", stage, f"{type(e).__name__}: {e}", tuple(frozen))
    feed = dict(zip(case.input_names, case.inputs))
    for runtime in RUNTIMES:
        try:
            got = execute(runtime, model, feed)
        except Exception as e:  # any runtime error on a model the compiler accepted is a bug
            return Result(case.name, case.op_types, "fail", runtime, f"{type(e).__name__}: {e}", tuple(frozen))
        why = mismatch(case, got)
        if why:
            return Result(case.name, case.op_types, "fail", runtime, why, tuple(frozen))
    return Result(case.name, case.op_types, "pass", "done", "", tuple(frozen))


@attrs.frozen
class Both:
    """A case run as the file is (``as_is``) and with the inputs its import asks for frozen (``frozen``)."""

    as_is: Result
    frozen: Result

    @property
    def name(self) -> str:
        return self.as_is.name

    @property
    def op_types(self) -> tuple[str, ...]:
        return self.as_is.op_types


def run_both(case: Case, *, soc: str = "ascend910b") -> Both:
    """``case`` as the file is and frozen. A case that passes as it is asks for nothing to be frozen:
    its frozen run is the same run, so it is not repeated."""
    as_is = run_case(case, soc=soc, freeze=False)
    return Both(as_is, as_is if as_is.status == "pass" else run_case(case, soc=soc))
