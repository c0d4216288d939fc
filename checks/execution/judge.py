"""Judging outputs: which oracle a run is held to, the outputs' distances to it, and the notes on
every output that could not be judged.

``choose(graph, runtime) -> Oracle`` picks the reference by what the run has, never by the graph's
name: a run that names the ONNX file its graph came from (``"onnx"``) is held to onnxruntime on
that file; if onnxruntime is missing or refuses it, to the reference outputs shipped beside the
file when the inputs are all ones (onnx's light models ship them), else to ``onnx.reference`` on
the imported graph. A run that names an ONNX backend node test (``"node_test"``: its graph is that
case's model, imported) feeds the case's inputs (``node_test_inputs``) and is held to the outputs ONNX
ships with the case (checks/conformance/cases.py), the reference outputs of a model. Any other run is
held to ``onnx.reference`` on the graph (checks/oracle.py).

``Oracle.outputs(arrays)`` returns the reference outputs or raises OracleUnavailable; the caller
turns that into a :class:`Note`, so an output without an oracle is counted and shown by
``zcspec verify``, never skipped in silence (``results``).
"""
from __future__ import annotations

import hashlib
import os

import attrs
import ml_dtypes
import numpy as np

from zcspec.checks.conformance.cases import case_named
from zcspec.checks.errors import OracleUnavailable, ScenarioError
from zcspec.checks.onnxruntime_oracle import onnxruntime_outputs
from zcspec.checks.oracle import oracle_outputs
from zcspec.spec.observables import OutputResult


@attrs.frozen
class Note:
    """An execution whose outputs (some or all) were not held to an oracle, and why.

    ``failed``: the call itself failed although the run gave it valid buffers (a finding, not only a
    gap in coverage: ``zcspec verify`` fails on it)."""

    run: str
    reason: str
    failed: bool = False


class Observations(list):
    """A scenario's observations, with the notes of the outputs that no oracle judged (``notes``)."""

    def __init__(self, items=(), notes=()):
        super().__init__(items)
        self.notes: list[Note] = list(notes)


def _shipped_reference(path: str) -> dict:
    """The reference output stored beside an ONNX file as ``<stem>_output_0.pb`` (input all ones)."""
    import onnx
    from onnx import numpy_helper
    reference = path[:-len(".onnx")] + "_output_0.pb"
    if not os.path.exists(reference):
        raise OracleUnavailable(f"no reference output beside {path!r}")
    model = onnx.load(path, load_external_data=False)
    return {model.graph.output[0].name: numpy_helper.to_array(onnx.load_tensor(reference))}


def _node_test(name: str):
    try:
        return case_named(name)
    except KeyError as e:
        raise ScenarioError(f"execution scenario: node_test: {e.args[0]}", key="node_test") from e


def node_test_inputs(name: str, model) -> dict:
    """The inputs of ONNX node test ``name`` for ``model``'s inputs (those left when the import froze some)."""
    case = _node_test(name)
    given = dict(zip(case.input_names, case.inputs))
    if missing := [io.tensor for io in model.tasks.inputs if io.tensor not in given]:
        raise ScenarioError(f"execution scenario: node test {name!r} has no input {missing[0]!r}", key="node_test")
    return {io.tensor: given[io.tensor] for io in model.tasks.inputs}


def _node_test_reference(name: str, arrays: dict) -> dict:
    """The expected outputs ONNX ships with node test ``name``, valid only for its own inputs."""
    case = _node_test(name)
    given = dict(zip(case.input_names, case.inputs))
    for key, array in arrays.items():
        if key not in given or not np.array_equal(np.asarray(array), given[key], equal_nan=True):
            raise OracleUnavailable(f"node test {name!r}'s outputs are for its own inputs, and {key!r} differs")
    return dict(zip(case.output_names, case.outputs))


@attrs.frozen
class Oracle:
    """The reference one run is held to (see the module doc)."""

    graph: object
    onnx: str | None = None
    values: dict = attrs.Factory(dict)
    ones: bool = False
    batch: str | None = None
    node_test: str | None = None

    def outputs(self, arrays: dict) -> dict:
        """Output name -> reference array for the inputs ``arrays``; OracleUnavailable saying why not."""
        if self.node_test:
            return _node_test_reference(self.node_test, arrays)
        if self.onnx:
            try:
                return onnxruntime_outputs(self.onnx, arrays, self.values)
            except OracleUnavailable as no_runtime:
                if self.ones:
                    try:
                        return _shipped_reference(self.onnx)
                    except OracleUnavailable:
                        pass
                try:
                    return oracle_outputs(self.graph, arrays, batch=self.batch)
                except OracleUnavailable as e:
                    raise OracleUnavailable(f"{no_runtime}; and {e}") from e
        return oracle_outputs(self.graph, arrays, batch=self.batch)


def choose(graph, runtime: dict) -> Oracle:
    return Oracle(graph, runtime.get("onnx"), dict(runtime.get("values", {})), runtime.get("inputs") == "ones",
                  runtime.get("batch"), runtime.get("node_test"))


def digest(array) -> str:
    return "sha1:" + hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()


def distance(mine: np.ndarray, want) -> float:
    """The largest difference to ``want``, relative to its largest finite magnitude (at least 1); equal
    elements (infinities and NaNs too) differ by 0. NaN where ``mine`` has a NaN the reference does not
    (so a NaN output never passes), infinite where an element that differs is infinite or where the two
    differ in shape or dtype. bfloat16 and the 8-bit floats (numpy kind ``V``) are widened."""
    want, got = (a.astype(np.float32) if a.dtype.kind == "V" else a for a in (np.asarray(want), np.asarray(mine)))
    if want.shape != got.shape or want.dtype != got.dtype:
        return float("inf")
    equal = got == want   # exact in the outputs' own dtype (integers beyond 2**53 too)
    want, got = want.astype(np.float64), got.astype(np.float64)
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    if np.any(nan_got != nan_want):
        return float("nan")
    differ = ~(nan_got | equal)
    if np.any(differ & ~(np.isfinite(got) & np.isfinite(want))):
        return float("inf")
    scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
    return float(np.max(np.abs(got[differ] - want[differ]), initial=0.0)) / scale


ORACLE_TOLERANCE = 1e-4   # EXEC-ORACLE's default: of the reference's largest magnitude (at least 1)
# Element types computed in fewer mantissa bits than the default tolerance resolves: a kernel that computes
# in the type itself rounds by a unit where the reference (or onnxruntime's kernel) rounds otherwise.
COARSE_FLOATS = {"float16": float(np.finfo(np.float16).eps), "bfloat16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)}
# float64 outputs: a kernel computing in double is held far tighter than the default, which would hide an
# error of a float32's few units (a polynomial coefficient dropped from the erf kernel: a mutant that passed).
# Not to double's own precision: where onnxruntime has no double kernel the reference is onnx.reference,
# which computes some functions (Erf, HardSwish, Gelu) at about single precision.
DOUBLE_TOLERANCE = 1e-7


def tolerance_for(array) -> float:
    """EXEC-ORACLE's tolerance for an output of ``array``'s element type: the default, or two units of the
    type's own precision where that is coarser (float16: 2**-9, bfloat16: 2**-6), or ``DOUBLE_TOLERANCE`` for
    float64. The 8-bit floats keep the default: the ops that output them (Cast) round exactly, as the
    references do."""
    name = np.asarray(array).dtype.name
    if name == "float64":
        return DOUBLE_TOLERANCE
    return max(ORACLE_TOLERANCE, 2 * COARSE_FLOATS.get(name, 0.0))


def reference(oracle: Oracle, arrays: dict, run: str, notes: list) -> dict | None:
    """The oracle's outputs, or None with a note saying why there are none."""
    try:
        return oracle.outputs(arrays)
    except OracleUnavailable as e:
        notes.append(Note(run, f"no oracle: {e}"))
        return None


def results(outputs, names, keys, got: dict, want: dict | None, run: str, notes: list,
            peer: dict | None = None) -> tuple:
    """OutputResults of one call: ``outputs`` the model's output descs (``.tensor``), ``names`` their
    I/O names, ``keys`` the graph's output names (the oracle's keys), ``got`` tensor -> array read
    back (missing: not readable), ``want`` graph output -> reference (None: no oracle, already
    noted). Every output left unjudged is noted."""
    out = []
    for io, name, key in zip(outputs, names, keys):
        if io.tensor not in got:
            continue
        mine, other = got[io.tensor], (peer or {}).get(io.tensor)
        diff = None
        if want is not None:
            if key in want:
                diff = distance(mine, want[key])
            else:
                notes.append(Note(run, f"no oracle for output {name!r}: the reference has no {key!r}"))
        out.append(OutputResult(name, digest(mine), None if other is None else digest(other), diff,
                                tolerance_for(mine)))
    return tuple(out)
