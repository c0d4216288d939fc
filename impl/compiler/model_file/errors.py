"""The one error a model file can raise on load."""
from __future__ import annotations

from zcspec.impl.compiler.errors import GraphError


class ModelFormatError(GraphError):
    """The bytes are not a well-formed zcspec model; ``what`` names the field or entry at fault."""

    def __init__(self, what: str, why: str, *, file: str = ""):
        self.what = what
        super().__init__(f"model file: {what}: {why}", file=file)
