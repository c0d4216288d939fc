"""The record of GE's ported unit tests: one frozen :class:`GeCase` per GE ``TEST_F`` (and parameter set).

A case module declares each case with :func:`ge_case` (a decorator) or :func:`ge_cases` (a parametrized
port: one record per parameter set), giving what a reader needs to follow it back to GE: the GE test file,
the ``TEST_F`` name, and the status. A **match** runs clean (zcspec gives GE's value or fact); a
**deviation** is a difference docs/ge-deviations.md records under ``row``: running it raises ``raises``
(GeMismatch when zcspec's value differs, or the refusal zcspec gives where GE succeeds), and ``reason``
names GE's value and zcspec's. The record is data, not a pytest mark, so that ``zcspec verify`` (which
ships without tests/) and pytest (tests/ge) judge the same cases the same way.

A case states its expectations with :func:`expect`, :func:`fact` and :func:`refuses`, which raise
:class:`GeMismatch` naming what GE expects and what zcspec gives; ``assert`` would vanish under ``-O``
and say nothing about the values.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Callable

import attrs

STATUSES = ("match", "deviation")

# Every case declared so far, by key (module::name[param]), in declaration order.
_CATALOGUE: dict[str, "GeCase"] = {}


class GeMismatch(AssertionError):
    """zcspec's result differs from what GE's test expects. An AssertionError so that a test framework
    reports it as a failed expectation, not a crash."""


@attrs.frozen
class GeCase:
    """One ported GE test (or one parameter set of it)."""

    module: str                   # the case module under checks/cases/ge (e.g. "block_mem_assigner")
    function: str                 # the case function in that module
    ge_file: str                  # GE's test file, e.g. "block_mem_assigner_unittest.cc"
    ge_test: str                  # the TEST_F name
    status: str                   # "match" or "deviation"
    run: Callable[[], None] = attrs.field(eq=False, repr=False)   # runs the case; raises on a mismatch
    param: str = ""               # the parameter set's id, for a parametrized port
    row: str = ""                 # a deviation's row in docs/ge-deviations.md (e.g. "P16")
    reason: str = ""              # a deviation: GE's value, zcspec's, and the GE function deciding it
    raises: tuple[type[BaseException], ...] = (GeMismatch,)      # what a deviation raises

    def __attrs_post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"case {self.key}: status {self.status!r} is not one of {STATUSES}")
        if self.status == "deviation" and not (self.row and self.reason):
            raise ValueError(f"case {self.key}: a deviation needs its docs/ge-deviations.md row and a reason")
        if self.status == "match" and (self.row or self.reason):
            raise ValueError(f"case {self.key}: a match has no deviation row or reason")

    @property
    def name(self) -> str:
        """The case's id: the function, with the parameter set's id in brackets for a parametrized port."""
        return f"{self.function}[{self.param}]" if self.param else self.function

    @property
    def key(self) -> str:
        return f"{self.module}::{self.name}"

    @property
    def source(self) -> str:
        """Where the case is written, as docs cite it (``checks/cases/ge/<module>.py::<function>``)."""
        return f"checks/cases/ge/{self.module}.py::{self.name}"

    @property
    def label(self) -> str:
        """The case as a report names it: GE's file and TEST_F, then the port."""
        return f"{self.ge_file} TEST_F {self.ge_test} ({self.source})"


def _register(case: GeCase) -> None:
    if case.key in _CATALOGUE:
        raise ValueError(f"GE case {case.key} is declared twice")
    _CATALOGUE[case.key] = case


def _module(fn) -> str:
    return fn.__module__.rsplit(".", 1)[-1]


def ge_case(ge_file: str, ge_test: str | None = None, *, row: str = "", reason: str = "",
            raises: tuple[type[BaseException], ...] | type[BaseException] = GeMismatch):
    """Declare the decorated function as the port of ``ge_file`` ``TEST_F(..., ge_test)`` (default: the
    function's name). With ``row`` and ``reason`` it is a recorded deviation that raises ``raises``."""
    def declare(fn):
        _register(GeCase(_module(fn), fn.__name__, ge_file, ge_test or fn.__name__,
                         "deviation" if row else "match", fn, row=row, reason=reason,
                         raises=raises if isinstance(raises, tuple) else (raises,)))
        return fn
    return declare


@attrs.frozen
class Param:
    """One parameter set of a parametrized port: its id (GE's TEST_F name when each set is one GE test),
    the keyword arguments, and, for a set that deviates, its row, reason and exception."""

    id: str
    kwargs: dict = attrs.field(factory=dict, eq=False)
    ge_test: str = ""
    row: str = ""
    reason: str = ""
    raises: tuple[type[BaseException], ...] = (GeMismatch,)


def ge_cases(ge_file: str, params: tuple[Param, ...]):
    """Declare the decorated function as a parametrized port: one record per ``Param``, whose GE test is
    the param's ``ge_test`` (default its id)."""
    def declare(fn):
        for p in params:
            _register(GeCase(_module(fn), fn.__name__, ge_file, p.ge_test or p.id,
                             "deviation" if p.row else "match", _bound(fn, p.kwargs), param=p.id, row=p.row,
                             reason=p.reason, raises=p.raises))
        return fn
    return declare


def _bound(fn, kwargs: dict) -> Callable[[], None]:
    def run():
        fn(**kwargs)
    run.__name__ = fn.__name__
    return run


def declared() -> tuple[GeCase, ...]:
    """Every case declared by the modules imported so far (``all.py`` imports them all)."""
    return tuple(_CATALOGUE.values())


def expect(got, ge, what: str) -> None:
    """``what`` must be GE's value ``ge``; zcspec gave ``got``."""
    if got != ge:
        raise GeMismatch(f"{what}: GE expects {ge!r}, zcspec gives {got!r}")


def fact(holds, what: str, gives: object = None) -> None:
    """GE's test asserts the fact ``what``; in zcspec it does not hold (``gives``: what zcspec has instead)."""
    if not holds:
        raise GeMismatch(f"GE expects {what}; in zcspec it does not hold"
                         + ("" if gives is None else f" (zcspec gives {gives!r})"))


@attrs.define
class Refused:
    """What :func:`refuses` caught: ``value`` is the exception (None until the block raised it)."""

    value: BaseException | None = None


@contextmanager
def refuses(error: type[BaseException], what: str = "it", match: str | None = None):
    """GE refuses ``what`` (its test expects a failure); zcspec must raise ``error`` in the block (its
    message matching ``match``). Yields a :class:`Refused` holding the exception, for further facts."""
    caught = Refused()
    try:
        yield caught
    except error as e:
        if match is not None and not re.search(match, str(e)):
            raise GeMismatch(f"GE refuses {what}; zcspec raises {type(e).__name__}, but its message {str(e)!r} "
                             f"does not match {match!r}") from e
        caught.value = e
        return
    raise GeMismatch(f"GE refuses {what}; zcspec accepts it (no {error.__name__} raised)")
