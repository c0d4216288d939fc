"""Errors of the fault catalogue. The ``zcspec faults`` command maps them to exit code 2."""
from __future__ import annotations


class FaultError(LookupError):
    """Base class of the catalogue's errors."""


class UnknownVariant(FaultError):
    """A variant name that is not in the catalogue; the message lists the known names."""

    def __init__(self, name: str, known: tuple[str, ...]):
        self.name, self.known = name, known
        super().__init__(f"fault variant {name!r} is unknown; known variants: {', '.join(known)}")
