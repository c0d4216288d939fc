"""``zcspec replay FILE [...]``: re-run counterexamples; exit 1 while any still fails."""
from __future__ import annotations

import json

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.finding import ForeignFinding, is_finding, replay_finding
from zcspec.checks.replay import corpus_files, export_pytest, replay


def configure(parser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="counterexample .json files (default: the built-in corpus)")
    parser.add_argument("--export-pytest", metavar="OUT.py", help="write the (single) counterexample as a pytest file")


def run(args) -> int:
    files = args.files or corpus_files()
    if args.export_pytest and len(files) != 1:
        raise UsageError("--export-pytest takes exactly one counterexample FILE")
    failing = 0
    for path in files:
        if is_finding(_peek(path)):     # a foreign compiler's finding (checks/foreign/finding.py)
            if args.export_pytest:
                raise UsageError(f"{path}: --export-pytest takes a zcspec counterexample, not a foreign finding")
            result = replay_finding(ForeignFinding.load(path))
            print(f"{path}: {result.summary()}")
            failing += result.still_fails
            continue
        cx = Counterexample.load(path)  # a malformed file is a CounterexampleError: bad input, exit code 2
        result = replay(cx)
        print(f"{path}: {result.summary()}")
        failing += result.still_fails
        if args.export_pytest:
            export_pytest(cx, args.export_pytest)
            print(f"wrote {args.export_pytest}")
    if not files:
        print("no counterexamples to replay")
    return 1 if failing else 0


def _peek(path: str):
    """The file's JSON, or None when it is not JSON (Counterexample.load then names what is wrong)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
