"""Errors of the spec package: malformed observations and misuse of the catalogue.

Every error is a :class:`SpecError` (a ``ValueError``) with structured fields,
so tests and the command line use them without parsing the message. The
command line maps any ``SpecError`` to exit code 2 (bad input).
"""
from __future__ import annotations


class SpecError(ValueError):
    """Bad input to the spec: an observation, an invariant or an argument breaks a rule."""


class ObservationFormatError(SpecError):
    """An observation's JSON is malformed.

    ``path`` locates the culprit inside the document (e.g. ``tensors[3].offset``),
    ``file`` names the file it came from when known.
    """

    def __init__(self, message: str, *, path: str = "", file: str = ""):
        self.message, self.path, self.file = message, path, file
        where = f"{file}: " if file else ""
        at = f"{path}: " if path else ""
        super().__init__(f"{where}{at}{message}")

    def in_file(self, file: str) -> "ObservationFormatError":
        """The same error, naming the file it came from (unless it already names one)."""
        return self if self.file else ObservationFormatError(self.message, path=self.path, file=file)


class ObservationConsistencyError(SpecError):
    """An observation is well-typed but refers to something it does not contain
    (a tensor naming an unknown block, a slot naming an unknown task, ...) or holds a value no
    artefact can have (a negative size, a lifetime outside the steps). ``path`` locates the culprit
    in the JSON document when known (``tensors[3].size``)."""

    def __init__(self, message: str, *, culprit: str = "", path: str = "", file: str = ""):
        self.message, self.culprit, self.path, self.file = message, culprit, path, file
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{path}: {message}" if path else f"{where}{message}")

    def in_file(self, file: str) -> "ObservationConsistencyError":
        """The same error, naming the file it came from (unless it already names one)."""
        return self if self.file else ObservationConsistencyError(self.message, culprit=self.culprit, path=self.path,
                                                                  file=file)


class UnknownInvariantError(SpecError):
    def __init__(self, invariant_id: str, known: tuple[str, ...] = ()):
        self.invariant_id = invariant_id
        hint = f"; known ids start with {sorted({k.split('-')[0] for k in known})}" if known else ""
        super().__init__(f"no invariant with id {invariant_id!r}{hint}")


class DuplicateInvariantError(SpecError):
    def __init__(self, invariant_id: str):
        self.invariant_id = invariant_id
        super().__init__(f"invariant id {invariant_id!r} is registered twice; ids must be unique and stable")
