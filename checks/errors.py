"""Errors of the checker: bad command lines, counterexample files, scenarios, plans, fault names.

:class:`CheckerError` is the checker's root (under ``ZcspecError``, docs/errors.md).
Every class here except :class:`OracleUnavailable` is the caller's fault, a
``BadInput``, which the command line maps to exit code 2 (``checks/cli/main.py``);
each names its culprit (the file, the key, the tensor) in its message and as a field.
"""
from __future__ import annotations

from zcspec.impl.platform.errors import BadInput, ZcspecError


class CheckerError(ZcspecError):
    """Root of the checker's errors."""


class UsageError(CheckerError, BadInput):
    """Bad command-line input that is not about a graph: an argument, an option value, a MODEL
    that names nothing loadable, a file that cannot be read or written (``file`` names it)."""

    def __init__(self, message: str, *, file: str = ""):
        self.file = file
        super().__init__(f"{file}: {message}" if file else message)


class ScenarioError(CheckerError, BadInput, ValueError):
    """A scenario's JSON form is malformed; ``key`` names the culprit (``kind``, ``runtime.model_edits``,
    the unknown keys of a run, ...) and the message says what is wrong with it."""

    def __init__(self, message: str, *, key: str):
        self.key = key
        super().__init__(message)


class CounterexampleError(CheckerError, BadInput, ValueError):
    """A counterexample file is malformed; the message names the file and the field."""


class PlanFormatError(CheckerError, BadInput, ValueError):
    """A plan dict (the JSON contract of docs/plan-format.md) that the layout checkers cannot read: a missing
    or ill-typed field, an unknown region, block or alias target, an alias cycle, or an inverted
    lifetime. ``tensor`` (or ``block``) names the culprit, ``file`` the file when known."""

    def __init__(self, message: str, *, tensor: str = "", block: object = None, file: str = ""):
        self.tensor, self.block, self.file = tensor, block, file
        super().__init__(f"{file}: {message}" if file else message)


class FaultError(CheckerError, BadInput, LookupError):
    """Base of the fault catalogue's errors."""


class UnknownVariant(FaultError):
    """A variant name that is not in the catalogue; the message lists the known names."""

    def __init__(self, name: str, known: tuple[str, ...]):
        self.name, self.known = name, known
        super().__init__(f"fault variant {name!r} is unknown; known variants: {', '.join(known)}")


class OracleUnavailable(CheckerError):
    """The graph has something the oracle cannot evaluate; the message says what. Not bad input:
    the oracle's own limit, which the differential runs note and skip."""
