"""The ``zcspec`` command: one subcommand module per job, dispatched from a table.

Exit codes everywhere: 0 ok, 1 a violation or failed check, 2 bad input (the
message names the file, node or tensor and what is wrong). Bad input is decided
by class, here only: any ``BadInput`` (impl/ and checks/) or ``SpecError`` (the
spec, which stands alone) exits with 2; any other error is a bug and propagates.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from zcspec import __version__
from zcspec.impl.platform.errors import BadInput

# (subcommand, module under checks.cli, one-line help). A module exposes
# ``configure(parser)`` and ``run(args) -> int``.
COMMANDS = (
    ("summary", "summary", "print a model summary: nodes by op type, tensors, weight and activation bytes"),
    ("spec", "spec_doc", "render the spec document (docs/SPEC.md), check it is current, or check an observation"),
    ("compile", "compile_cmd", "compile a model into a .zcm model file (passes, memory plan, tasks)"),
    ("replay", "replay_cmd", "re-run counterexample files; exit 1 while one still fails"),
    ("verify", "verify", "the main job: every invariant over the zoo, Z3 proofs, a random campaign, the corpus"),
    ("explore", "explore", "a time-boxed random campaign that writes counterexample files"),
    ("exhaustive", "exhaustive", "check every graph up to N nodes over a small op set (bounded exhaustive mode)"),
    ("run", "run", "run a model once on the emulated device (runtime v1 or v2, zero copy on or off), with counters"),
    ("plan", "plan", "plan a model's memory (table, --json contract, --picture) or a bare --buffers instance"),
    ("lower", "lower", "lower a model to runtime v2's execution graph; --dump prints it before and after the passes"),
    ("faults", "faults", "the fault catalogue: list deliberately wrong variants of impl, hunt them, replay their counterexamples"),
    ("conformance", "conformance", "run ONNX's backend node tests for the claimed ops through both runtimes; a per-op table"),
    ("import", "import_cmd", "read another compiler's memory plan (an ExecuTorch .pte, an XLA dump) into the plan observation JSON"),
    ("diff", "diff_cmd", "compare two plans of one program: arenas, tensors that gained or lost memory, aliases, claims"),
    ("check", "check_plan", "judge plan files of any planner: claims, the arena against the lower bound and compact"),
    ("schema", "schema_cmd", "print the JSON Schema of the plan file format that zcspec check reads (docs/plan-format.md)"),
    ("campaign", "campaign_cmd", "draw programs for another compiler (xla, executorch, litert, iree, tvm), check its plans, compare with eager"),
)


def build_parser(commands: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    """The parser, every subcommand listed; only those in ``commands`` (default: all) have their
    module imported and configured. Subcommand modules import what they need at their top, so
    ``main`` imports just the one it runs: ``zcspec plan`` does not pay for ``verify``'s imports."""
    parser = argparse.ArgumentParser(
        prog="zcspec",
        description="Specify, implement and check GE-style zero-copy I/O and static memory planning.",
    )
    parser.add_argument("--version", action="version", version=f"zcspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help_text in COMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if commands is None or name in commands:
            mod = importlib.import_module(f"zcspec.checks.cli.{module}")
            mod.configure(p)
            p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command and return its exit code. While it runs, ``sys.stdout`` drops its output once
    the reader has gone, so the code survives a pipe: ``zcspec check bad.json | head -1`` exits 1."""
    stdout = sys.stdout
    sys.stdout = _ReaderMayLeave(stdout)
    try:
        return _dispatch(sys.argv[1:] if argv is None else list(argv))
    finally:
        # Flush through the wrapper: Python's own flush at exit would find the pipe closed and print
        # "Exception ignored ... BrokenPipeError"; after this one, anything left goes to devnull.
        sys.stdout.flush()
        sys.stdout = stdout


def _dispatch(argv: list[str]) -> int:
    parser = build_parser(tuple(argv[:1]))
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except Exception as e:
        if not _bad_input(e):
            raise
        print(f"zcspec {args.command}: error: {e}", file=sys.stderr)
        return 2


class _ReaderMayLeave:
    """A text stream that stops writing when its reader goes away (``zcspec plan ... | head``): the
    first BrokenPipeError points the stream's file descriptor at devnull, and every later write
    lands there. The command then runs to its end and returns its real exit code: a pipe must not
    turn a violation into 0, as catching the error and returning early did."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str):
        # Everything else (encoding, isatty, fileno, ...) is the wrapped stream's.
        return getattr(self._stream, name)


def _bad_input(e: Exception) -> bool:
    """The caller's fault, whichever layer noticed it (docs/errors.md): a ``BadInput`` or the spec's
    ``SpecError``. The spec is looked up among the loaded modules, not imported: importing it loads
    the whole catalogue (0.3 s), which ``zcspec plan --buffers`` never needs, and a command that
    did not load the spec cannot have raised its error."""
    spec_errors = sys.modules.get("zcspec.spec.errors")
    return isinstance(e, BadInput) or (spec_errors is not None and isinstance(e, spec_errors.SpecError))


if __name__ == "__main__":
    sys.exit(main())
