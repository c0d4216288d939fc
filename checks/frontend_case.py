"""The type of one front-end case: a model (an ONNX model or a graph JSON text) and what its import, or
its compilation, must do.

:mod:`zcspec.checks.frontend_cases` (ONNX models, built in :mod:`zcspec.checks.frontend_models`) and
:mod:`zcspec.checks.graph_json_cases` (graph JSON texts) build them; verify imports each, compiles those
that must be refused when compiled, and judges the result (checks/verify_onnx_cases.py).
"""
from __future__ import annotations

import os

import attrs
import onnx

from zcspec.impl.compiler.options import CompileOptions

STAGES = ("import", "compile")


def _culprits(instance, attribute, value) -> None:
    if not isinstance(value, tuple) or not all(isinstance(c, str) and c for c in value):
        raise TypeError(f"front-end case {instance.name!r}: culprits={value!r} must be a tuple of non-empty texts")


def _consistent(case: FrontendCase) -> None:
    """A case refused when compiled names the refusal (one that must compile is a case that must import: it
    is compiled and run through both runtimes); only such a case carries CompileOptions."""
    if case.at == "compile" and case.refused is None:
        raise ValueError(f"front-end case {case.name!r}: at='compile' needs the error class the compile must "
                         "raise (a file that must compile is a case that must import)")
    if case.options is not None and case.at != "compile":
        raise ValueError(f"front-end case {case.name!r}: options are for a case refused at compile, not at {case.at}")


@attrs.frozen(eq=False)
class FrontendCase:
    """``model``: an ONNX model, or the text of a zcspec graph JSON file (``zcspec plan graph.json``).

    - ``refused``: the error class (its name, or a base class's) the file must be refused with; None: it
      must import, and then runs through both runtimes.
    - ``culprits``: texts the refusal's message must hold (the node, tensor, field or option it names).
    - ``at``: where the refusal must happen: ``"import"`` (reading and validating the file, ``load_graph``)
      or ``"compile"``: the file must import, and compiling its graph with ``options`` must refuse it.
    - ``options``: the CompileOptions to compile with (``at="compile"`` only); None: the run's SoC's defaults.
    """

    name: str = attrs.field(validator=[attrs.validators.instance_of(str), attrs.validators.min_len(1)])
    model: onnx.ModelProto | str = attrs.field(validator=attrs.validators.instance_of((onnx.ModelProto, str)))
    refused: str | None = attrs.field(default=None, validator=attrs.validators.optional(
        [attrs.validators.instance_of(str), attrs.validators.min_len(1)]))
    culprits: tuple[str, ...] = attrs.field(default=(), validator=_culprits)
    why: str = attrs.field(default="", validator=attrs.validators.instance_of(str))
    at: str = attrs.field(default="import", kw_only=True, validator=attrs.validators.in_(STAGES))
    options: CompileOptions | None = attrs.field(default=None, kw_only=True, validator=attrs.validators.optional(
        attrs.validators.instance_of(CompileOptions)))

    def __attrs_post_init__(self) -> None:
        _consistent(self)


def write_case_file(case: FrontendCase, folder: str) -> str:
    """Write ``case``'s model into ``folder`` as the file a user would hand the front end (``NAME.onnx``, or
    ``NAME.json`` for a graph JSON text); returns its path."""
    path = os.path.join(folder, case.name + (".json" if isinstance(case.model, str) else ".onnx"))
    if isinstance(case.model, str):
        with open(path, "w", encoding="utf-8") as f:
            f.write(case.model)
    else:
        onnx.save(case.model, path)
    return path
