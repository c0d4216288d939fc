"""verify's cases for MiniMalloc's CSV files: ``read_minimalloc_csv`` and ``zcspec plan --buffers``.

The fixtures are text here (:data:`GOOD`, :data:`BAD`), written to a temporary directory when a case
is judged, each with what the checker knows it holds:

- a well-formed file (header case and spaces free, an ``alignment`` column, an extra ``offset``
  column, blank lines) must read as exactly its rows, in file order; then ``zcspec plan --buffers F``
  runs through the command line's ``main``: ``--strategy compact --json`` (without and with a
  ``--capacity`` at the optimum) must exit 0 with a layout ``packing_check`` accepts within it,
  ``--strategy ge --json`` must give exactly greedy by size with first fit
  (:func:`zcspec.checks.packing_facts.greedy_by_size`), and a ``--capacity`` one byte below the
  optimum must exit 1 with the table naming the capacity and ``DOES NOT FIT``;
- a malformed one (empty, a missing column, a short row, a field not an integer, a zero size, an
  empty lifetime, a duplicate id, bad bytes, a missing file, a directory) must be refused with the
  reader's error class naming the file, the line (``line`` field and ``line N`` in the message)
  and the culprit; through ``main`` it exits 2 with the file named on stderr.

The optimum of each good fixture is Z3's (they are small); see :mod:`zcspec.checks.packing_cases`.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile

import attrs

from zcspec.checks.cli.main import main
from zcspec.checks.packing_check import validate
from zcspec.checks.packing_facts import GAPPED, Layout, Piece, arena_of, greedy_by_size
from zcspec.checks.proofs.optimal import OPTIMAL, optimal_layout
from zcspec.impl.compiler.memory.packing import BufferFileError, InvalidBufferError, read_minimalloc_csv


@attrs.frozen
class GoodFile:
    """A well-formed file: ``text`` holds exactly ``pieces``, in order (module doc)."""

    name: str
    text: str
    pieces: tuple[Piece, ...]

    @property
    def label(self) -> str:
        return f"MiniMalloc CSV {self.name}.csv"

    def judge(self) -> list[str]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{self.name}.csv")
            with open(path, "w", newline="") as f:
                f.write(self.text)
            got = [(b.id, b.lower, b.upper, b.size, b.align) for b in read_minimalloc_csv(path)]
            want = [tuple(p) for p in self.pieces]
            if got != want:
                missing = [p[0] for p in want if p not in got]
                return [f"{path}: read {got}, the file holds {want} (rows {missing} wrong or missing)"]
            return self._plans(path)

    def _plans(self, path: str) -> list[str]:
        best = optimal_layout([(p.size, p.lower, p.upper - 1) for p in self.pieces],
                              aligns=[p.align for p in self.pieces], timeout_ms=20_000)
        if best.status != OPTIMAL:
            return []   # not seen on fixtures this small: nothing to set the capacities by
        problems = []
        for extra, capacity in (((), None), (("--capacity", str(best.arena)), best.arena)):
            argv = ["plan", "--buffers", path, "--strategy", "compact", "--json", *extra]
            code, out, err = _run(argv)
            if code != 0:
                problems.append(f"zcspec {' '.join(argv[1:])}: exit {code}, expected 0 (fits in the optimum "
                                f"{best.arena}); stderr {err.strip()!r}")
                continue
            printed = json.loads(out)
            if set(printed) != {"arena", "offsets"}:
                problems.append(f"zcspec {' '.join(argv[1:])} printed keys {sorted(printed)}, the contract is exactly "
                                "arena and offsets")
                continue
            problems += [f"zcspec {' '.join(argv[1:])}: {f}"
                         for f in validate(self.pieces, Layout(**printed), capacity=capacity)]
        argv = ["plan", "--buffers", path, "--strategy", "ge", "--json"]
        code, out, err = _run(argv)
        first_fit = greedy_by_size(self.pieces, fit="first")
        if code != 0:
            problems.append(f"zcspec {' '.join(argv[1:])}: exit {code}; stderr {err.strip()!r}")
        elif json.loads(out) != {"arena": arena_of(self.pieces, first_fit), "offsets": first_fit}:
            problems.append(f"zcspec {' '.join(argv[1:])} printed {out.strip()}, greedy by size with first fit is "
                            f"{json.dumps({'arena': arena_of(self.pieces, first_fit), 'offsets': first_fit})}")
        below = best.arena - 1
        argv = ["plan", "--buffers", path, "--strategy", "compact", "--capacity", str(below)]
        code, out, err = _run(argv)
        line = next((ln for ln in out.splitlines() if ln.strip().startswith("capacity")), "")
        if code != 1 or f"{below:,}" not in line or "DOES NOT FIT" not in line:
            problems.append(f"zcspec {' '.join(argv[1:])}: exit {code} and capacity line {line.strip()!r}, expected "
                            f"exit 1 and a line naming {below:,} bytes DOES NOT FIT (the optimum is {best.arena})")
        return problems


@attrs.frozen
class BadFile:
    """A malformed file (``content`` text or bytes; None: no file at the path, "<dir>": a directory):
    reading it must raise ``error`` naming the file, ``line`` (0: none) and each of ``words``."""

    name: str
    content: str | bytes | None
    error: type
    line: int
    words: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"MiniMalloc CSV {self.name}.csv (malformed)"

    def judge(self) -> list[str]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{self.name}.csv")
            if self.content == "<dir>":
                os.mkdir(path)
            elif self.content is not None:
                with open(path, "wb") as f:
                    f.write(self.content if isinstance(self.content, bytes) else self.content.encode())
            try:
                got = read_minimalloc_csv(path)
            except (BufferFileError, InvalidBufferError) as e:
                problems = self._judge_error(e, path)
            else:
                return [f"{path}: read as {len(got)} buffer(s), expected {self.error.__name__}"]
            code, _, err = _run(["plan", "--buffers", path, "--strategy", "compact"])
            if code != 2 or path not in err:
                problems.append(f"zcspec plan --buffers {path}: exit {code}, stderr {err.strip()!r}; expected exit 2 "
                                "naming the file")
            return problems

    def _judge_error(self, e, path: str) -> list[str]:
        message, problems = str(e), []
        if type(e) is not self.error:
            problems.append(f"{type(e).__name__} ({message}), expected {self.error.__name__}")
        if e.file != path or not message.startswith(path):
            problems.append(f"error {message!r} (file={e.file!r}) does not name the file {path}")
        if e.line != self.line or (self.line and f"line {self.line}:" not in message):
            problems.append(f"error {message!r} (line={e.line!r}) does not name line {self.line}")
        problems += [f"error {message!r} does not name {w!r}" for w in self.words if w not in message]
        return problems


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``zcspec ARGV`` through the command line's ``main``: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


# Equal sizes with different starts that overlap (b and c, e, f and h): greedy's tie rule decides their offsets.
_PLAIN = (Piece("a", 0, 3, 24), Piece("b", 1, 4, 16), Piece("c", 2, 6, 16), Piece("d", 3, 5, 24),
          Piece("e", 0, 2, 8), Piece("f", 1, 6, 8), Piece("g", 5, 7, 40), Piece("h", 2, 3, 8))

GOOD = (
    GoodFile("aligned", "ID, Lower ,upper,SIZE,alignment,offset\n"
             " g0 ,3,6, 7,2,0\n\ng1,0,6,1,8,0\ng2,2,4,3,2,0\n,,,,,\ng3,3,4,3,8,0\ng4,2,4,1,8,0\n\n", GAPPED),
    GoodFile("plain", "id,lower,upper,size\n" + "".join(f"{p.id},{p.lower},{p.upper},{p.size}\n" for p in _PLAIN),
             _PLAIN),
)

_HEAD = "id,lower,upper,size\n"
BAD = (
    BadFile("empty", "", BufferFileError, 0, ("empty file",)),
    BadFile("no-size-column", "id,lower,upper\na,0,1\n", BufferFileError, 1, ("size",)),
    BadFile("short-row", _HEAD + "a,0,2,4\n\nb,0,2\n", BufferFileError, 4, ("fields",)),
    BadFile("text-size", _HEAD + "a,0,2,4\nb,1,3,4\nc,0,2,x4\n", BufferFileError, 4, ("'c'", "size='x4'")),
    BadFile("text-alignment", "id,lower,upper,size,alignment\na,0,2,4,four\n", BufferFileError, 2,
            ("'a'", "alignment='four'")),
    BadFile("zero-size", _HEAD + "z,0,2,0\n", InvalidBufferError, 2, ("'z'", "size=0")),
    BadFile("zero-alignment", "id,lower,upper,size,alignment\na,0,2,4,1\nb,0,2,4,0\n", InvalidBufferError, 3,
            ("'b'", "align=0")),
    BadFile("empty-lifetime", _HEAD + "a,0,2,4\nb,4,4,4\n", InvalidBufferError, 3, ("'b'", "lower=4 >= upper=4")),
    BadFile("negative-lower", _HEAD + "a,-1,2,4\n", InvalidBufferError, 2, ("'a'", "lower=-1")),
    BadFile("duplicate-id", _HEAD + "a,0,2,4\nb,0,2,4\n\na,3,5,4\n", InvalidBufferError, 5,
            ("'a'", "duplicate", "line 2")),
    BadFile("not-utf8", b"id,lower,upper,size\n\xff\xfe,0,2,4\n", BufferFileError, 0, ("cannot read",)),
    BadFile("missing", None, BufferFileError, 0, ("cannot read",)),
    BadFile("directory", "<dir>", BufferFileError, 0, ("cannot read",)),
)


def csv_cases() -> list:
    """The CSV reader's and ``zcspec plan --buffers``'s cases (module doc)."""
    return [*GOOD, *BAD]
