"""The type of one front-end case: a model (an ONNX model or a graph JSON text) and what its import must do.

:mod:`zcspec.checks.frontend_cases` (ONNX models, built in :mod:`zcspec.checks.frontend_models`) and
:mod:`zcspec.checks.graph_json_cases` (graph JSON texts) build them; verify imports each and judges the result.
"""
from __future__ import annotations

import attrs
import onnx


@attrs.frozen(eq=False)
class FrontendCase:
    """``model``: an ONNX model, or the text of a zcspec graph JSON file (``zcspec plan graph.json``)."""

    name: str
    model: onnx.ModelProto | str
    refused: str | None = None            # the error class the import must raise; None: it must import
    culprits: tuple[str, ...] = ()        # what the refusal's message must name
    why: str = ""
