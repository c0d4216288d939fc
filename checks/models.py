"""Loading a model by name: an .onnx file, a graph .json, ``zoo:NAME`` (onnx's light models) or a compiled .zcm.

``load_graph(path, shape_args)`` gives the validated IR graph; ``load_compiled(path, ...)``
the CompiledModel (a .zcm is read and validated, anything else compiled). The command
line (every subcommand taking MODEL), ``checks.zoo`` and the tests share these. A name that
points at nothing loadable is a ``UsageError``; a bad model is the front end's or the
model file's own error; either names the file.
"""
from __future__ import annotations

import os
import re

import onnx

from zcspec.checks.errors import UsageError
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import Imported, import_onnx
from zcspec.impl.compiler.graph_json import from_json
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.validate import validate
from zcspec.impl.platform.errors import BadInput

_SHAPE = re.compile(r"^(?P<name>.+)=(?P<dims>\d+(x\d+)*)$")


def parse_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``NAME=1x3x224x224`` -> (NAME, (1, 3, 224, 224)). The name may contain '/' and ':'."""
    m = _SHAPE.match(text)
    if not m:
        raise UsageError(f"--shape {text!r}: expected NAME=DIMxDIMx... with non-negative integers, "
                         "e.g. data=1x3x224x224")
    # A 0 is a real zero-sized dimension (an empty tensor), not "dynamic".
    return m["name"], tuple(int(d) for d in m["dims"].split("x"))


def parse_value(text: str) -> tuple[str, list]:
    """``NAME=16000`` or ``NAME=1,2,3`` -> (NAME, the number or list of numbers)."""
    name, sep, rest = text.rpartition("=")
    try:
        numbers = [float(v) if any(c in v for c in ".eE") else int(v) for v in rest.split(",")] if sep else []
    except ValueError:
        numbers = []
    if not name or not numbers:
        raise UsageError(f"--value {text!r}: expected NAME=NUMBER or NAME=N1,N2,..., e.g. sr=16000")
    return name, numbers[0] if len(numbers) == 1 else numbers


def zoo_path(name: str) -> str:
    """The file of a zoo model: ``zoo:resnet50`` is onnx's ``light_resnet50.onnx``."""
    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    path = os.path.join(folder, f"light_{name}.onnx")
    if not os.path.exists(path):
        known = sorted(f[6:-5] for f in os.listdir(folder) if f.endswith(".onnx"))
        raise UsageError(f"no zoo model {name!r}; known: {', '.join(known)}", file=f"zoo:{name}")
    return path


def load_graph(path: str, shape_args: list[str] = (), value_args: list[str] = ()) -> Graph:
    """The validated graph in ``path`` (or ``zoo:NAME``); an error naming the file on any problem.
    ``shape_args``/``value_args`` are ``--shape``/``--value`` texts (an ONNX model's inputs)."""
    return load_imported(path, shape_args, value_args).graph


def load_imported(path: str, shape_args: list[str] = (), value_args: list[str] = ()) -> Imported:
    """``load_graph`` with what the import noticed about the file (an ONNX file's stale shape
    annotations; a graph .json has none)."""
    shapes = dict(parse_shape(s) for s in shape_args)
    values = dict(parse_value(v) for v in value_args)
    if path.startswith("zoo:"):
        path = zoo_path(path[4:])
    if not os.path.exists(path):
        raise UsageError("no such file", file=path)
    try:
        if path.endswith(".onnx"):
            return import_onnx(path, shapes=shapes, values=values)
        if path.endswith(".json"):
            with open(path, encoding="utf-8") as f:
                return Imported(validate(from_json(f.read())))
    except BadInput as e:
        raise (e if e.file else e.in_file(path)) from e.__cause__
    raise UsageError("unknown model file type: expected .onnx or .json", file=path)


def load_compiled(path: str, shape_args: list[str] = (), value_args: list[str] = (), *, soc: str = "ascend910b",
                  strategy: str = "ge"):
    """The CompiledModel of MODEL: a .zcm file is read (and validated), anything else compiled."""
    if path.endswith(".zcm"):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise UsageError(f"cannot read the model file: {e.strerror}", file=path) from e
        try:
            return load_model(data)
        except ModelFormatError as e:
            raise (e if e.file else e.in_file(path)) from e.__cause__
    return compile_file(path, load_graph(path, shape_args, value_args), CompileOptions(soc=soc, strategy=strategy))


def compile_file(path: str, graph: Graph, options: CompileOptions):
    """``graph`` (read from ``path``) compiled; a refusal names the file, as a refusal to read it does."""
    try:
        return build_model(graph, options)
    except BadInput as e:
        raise (e if e.file else e.in_file(path)) from e.__cause__
