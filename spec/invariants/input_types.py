"""Input files: the types an import gives the values of an accepted ONNX model (one claim of the input_file
concern, listed by input_file.py)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.input_file import InputFileObservation

ONNX_SHAPES = ("onnx/shape_inference/implementation.cc (InferShapes); onnx/defs/schema.h "
               "(OpSchema::TypeAndShapeInferenceFunction)")


def _compared(obs: InputFileObservation):
    """(the file's typed value, the imported tensor of that name) for every value both give."""
    if obs.format != "onnx" or not obs.outcome.accepted or obs.imported is None:
        return
    imported = {t.name: t for t in obs.imported}
    for v in obs.typed:
        if v.name in imported:
            yield v, imported[v.name]


def _import_types(obs: InputFileObservation):
    for want, got in _compared(obs):
        if (got.dims, got.dtype) != (want.dims, want.dtype):
            yield violation(f"tensor {want.name!r}", f"the import gives it {got.dtype}{list(got.dims)}, but ONNX's "
                            f"shape inference on {obs.file} gives {want.dtype}{list(want.dims)}",
                            imported=[got.dtype, list(got.dims)], onnx=[want.dtype, list(want.dims)])


IMPORT_TYPES = Invariant(
    id="INPUT-IMPORT-TYPES",
    title="An import keeps the shapes and element types ONNX infers",
    statement="For an ONNX model the front end accepts, every value to which ONNX's own shape inference on the "
              "file gives a fixed shape and an element type (graph inputs, intermediate values, outputs) has that "
              "shape and that type in the imported graph, wherever the imported graph keeps the value's name.",
    rationale="Every byte count downstream starts from these shapes and types: the planner sizes blocks by them, "
              "the task slots span them, the runtimes check the caller's buffers against them. A front end that "
              "broadcasts, reshapes or promotes a type differently from ONNX builds a consistent model of the "
              "wrong graph: the memory claims all hold, and only an output comparison, when there is one, would "
              "notice. ONNX's inference is the file format's own statement of the types, independent of the "
              "front end; a value the import renames or folds away is not judged.",
    ge_source=ONNX_SHAPES,
    applies_to="input_file", concern="input_file", predicate=_import_types,
    precondition=lambda obs: next(_compared(obs), None) is not None,
)
