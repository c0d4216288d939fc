"""Errors of the memory planner: a graph the planning rules cannot place.

Each is a :class:`~impl.compiler.errors.GraphError` (exit code 2 on the
command line) naming the node or tensor and the broken rule.
"""
from __future__ import annotations

from zcspec.impl.compiler.errors import GraphError


class PlanError(GraphError):
    """The graph breaks a planning rule (e.g. a tensor in two continuous-input groups)."""

    def __init__(self, message: str, *, node: str = "", tensor: str = "", rule: str = ""):
        self.rule = rule
        suffix = f" [{rule}]" if rule else ""
        super().__init__(message + suffix, node=node, tensor=tensor)

