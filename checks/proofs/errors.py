"""Errors of the layout checkers: a plan (the JSON contract of DESIGN.md) that cannot be read.

A malformed plan is bad input, not a violation: the checkers cannot say anything
about a layout they cannot read. Every error is an
:class:`zcspec.impl.compiler.errors.GraphError`, so the command line maps it to exit
code 2, and carries the tensor (or block) it is about as a structured field.
"""
from __future__ import annotations

from zcspec.impl.compiler.errors import GraphError


class PlanFormatError(GraphError):
    """The plan dict breaks the contract: a missing or ill-typed field, an unknown
    region, block or alias target, an alias cycle, or an inverted lifetime."""

    def __init__(self, message: str, *, tensor: str = "", block: object = None, file: str = ""):
        self.block = block
        super().__init__(message, tensor=tensor, file=file)
