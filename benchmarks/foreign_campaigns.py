"""The campaigns on other compilers, from a clean start: what each finds, in how many programs and seconds.

Runs each campaign whose Python is given with seed 0 for a fixed number of programs (each planner's
own, as docs/foreign-planners.md runs it; ``--examples`` sets one for all) or until ``--budget``
seconds of drawing, and prints one markdown row per planner and release: the programs run (the
shrinking's included) and when the first finding was drawn, the seconds, the findings by kind (a
campaign stops at its first confirmed bug or miss; hazards are counted), and the shrunk finding's
shape. A planner without a Python is listed as skipped.

Each campaign runs in a child process: LiteRT's, XLA's and IREE's in the planner's Python (which
needs zcspec too), ExecuTorch's and TVM's in this one, exporting with a worker of the planner's.
The Pythons come from the options or the environment:

    ZCSPEC_LITERT_PYTHON, ZCSPEC_EXECUTORCH_PYTHON (the release with pytorch/executorch#21840, 1.4.1),
    ZCSPEC_EXECUTORCH_FIXED_PYTHON (a release with its fix, 1.5.1), ZCSPEC_XLA_PYTHON,
    ZCSPEC_IREE_PYTHON, ZCSPEC_TVM_PYTHON

    python benchmarks/foreign_campaigns.py
    python benchmarks/foreign_campaigns.py --litert /venvs/litert/bin/python --examples 500 --budget 120
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import attrs


@attrs.frozen
class Planner:
    """A campaign: its row, its module (zcspec.checks.foreign.NAME), the variable naming its Python,
    whether it compiles in a worker of that Python (else it runs in it), and how far it draws."""

    row: str
    module: str
    env: str
    worker: bool
    examples: int
    max_steps: int

    @property
    def option(self) -> str:
        return "--" + self.row


PLANNERS = (
    Planner("litert", "litert_campaign", "ZCSPEC_LITERT_PYTHON", False, 3000, 10),
    Planner("executorch", "executorch_campaign", "ZCSPEC_EXECUTORCH_PYTHON", True, 300, 6),
    Planner("executorch-fixed", "executorch_campaign", "ZCSPEC_EXECUTORCH_FIXED_PYTHON", True, 300, 6),
    Planner("xla", "xla_campaign", "ZCSPEC_XLA_PYTHON", False, 300, 5),
    Planner("iree", "iree_campaign", "ZCSPEC_IREE_PYTHON", False, 100, 5),
    Planner("tvm", "tvm_campaign", "ZCSPEC_TVM_PYTHON", True, 100, 6),
)
VERSION_KEYS = ("ai-edge-litert", "executorch", "jaxlib", "iree-base-compiler", "tvm")


def shape(program) -> str:
    """A drawn program in one line: its operators (LiteRT) or steps, and its backend config if any."""
    parts = [s[0] if isinstance(s, tuple) else s.form + (f"({', '.join(map(str, s.args))})" if s.args else "")
             for s in program.steps]
    extra = getattr(program, "reinplace", ())
    return " → ".join(parts) + (f"; reinplace_extra_ops {{{', '.join(extra)}}}" if extra else "")


def row_data(planner: Planner, python: str, examples: int, budget: float) -> dict:
    """Run one campaign here (the child's side) and return what its row shows."""
    campaign = importlib.import_module(f"zcspec.checks.foreign.{planner.module}").campaign
    options = dict(examples=examples, seed=0, budget=budget, max_steps=planner.max_steps)
    result = campaign(python, **options) if planner.worker else campaign(**options)
    f = result.finding
    return {"versions": result.versions, "programs": result.programs, "seconds": result.seconds,
            "found_at": result.found_at, "found_seconds": result.found_seconds, "refused": result.refused,
            "hazards": result.hazards, "bug_class": result.bug_class, "other_bugs": result.other_bugs,
            "finding": None if f is None else {"kind": f.kind, "claims": list(f.claims), "steps": len(f.program.steps),
                                                "shape": shape(f.program), "max_abs_diff": f.max_abs_diff}}


def run_row(planner: Planner, python: str, examples: int, budget: float) -> dict:
    """Run one campaign in a child process (module doc); its row's data, or ``{"error": ...}``."""
    child = sys.executable if planner.worker else python
    argv = [child, str(Path(__file__).resolve()), "--row", planner.row, "--python", python,
            "--examples", str(examples), "--budget", str(budget)]
    run = subprocess.run(argv, capture_output=True, text=True)
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        last = ((run.stderr or run.stdout).strip().splitlines() or ["no output"])[-1]
        return {"error": f"{child} exited {run.returncode}: {last[:200].replace('|', '/')}"}
    return json.loads(lines[-1])


def table_row(planner: Planner, data: dict) -> str:
    if "error" in data:
        return f"| {planner.row} | - | - | - | - | - | - | failed: {data['error']} |"
    version = next((f"{k} {data['versions'][k]}" for k in VERSION_KEYS if k in data["versions"]), "?")
    f = data["finding"]
    drawn = f"{data['programs']:,}"
    if f:
        drawn += f" (finding drawn at {data['found_at']:,}, {data['found_seconds']:.0f} s)"
    kinds = {k: int(bool(f) and f["kind"] == k) for k in ("confirmed", "miss")}
    what = "none"
    if f:
        diff = f["max_abs_diff"]
        result = ("no result (crashed or hung)" if diff is None or not math.isfinite(diff)
                  else f"result off by {diff:.3g}")
        what = (f"{', '.join(f['claims']) or 'no claim broken'}, {f['steps']} step(s), {result}"
                f"{'; class: ' + data['bug_class'] if data['bug_class'] else ''}: {f['shape']}")
    what = what.replace("|", "\\|")   # a cell of a markdown table
    return (f"| {planner.row} | {version} | {drawn} | {data['seconds']:.0f} | {kinds['confirmed']} | {kinds['miss']} | "
            f"{data['hazards']} | {what} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for p in PLANNERS:
        parser.add_argument(p.option, metavar="PYTHON", default=os.environ.get(p.env),
                            help=f"the Python for the {p.row} campaign (default ${p.env})")
    parser.add_argument("--examples", type=int, metavar="N",
                        help="programs per campaign at most (default: each planner's, "
                             + ", ".join(f"{p.row} {p.examples}" for p in PLANNERS) + ")")
    parser.add_argument("--budget", type=float, default=900.0, metavar="S",
                        help="stop drawing after S seconds (default 900; shrinking a finding may take longer)")
    parser.add_argument("--row", choices=[p.row for p in PLANNERS], help=argparse.SUPPRESS)
    parser.add_argument("--python", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.examples is not None and args.examples < 1 or args.budget <= 0:
        parser.error("--examples must be at least 1 and --budget positive")
    by_row = {p.row: p for p in PLANNERS}
    if args.row:         # the child: one campaign, one JSON line
        p = by_row[args.row]
        print(json.dumps(row_data(p, args.python, args.examples or p.examples, args.budget)))
        return 0
    print("| planner | release | programs | seconds | confirmed | miss | hazards | first finding, shrunk |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for p in PLANNERS:
        python = getattr(args, p.row.replace("-", "_"))
        if not python:
            print(f"| {p.row} | - | - | - | - | - | - | skipped: no Python ({p.option} or ${p.env}) |", flush=True)
            continue
        started = time.monotonic()
        data = run_row(p, python, args.examples or p.examples, args.budget)
        failed += "error" in data
        print(table_row(p, data), flush=True)
        print(f"{p.row}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
