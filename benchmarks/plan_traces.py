"""Real planners' traces: five published memory-planning problems packed by ``--strategy compact``.

Each trace is a static allocation problem in MiniMalloc's CSV format (``id,lower,upper,size``) as
published in idealloc's repository (GitHub cappadokes/idealloc, MIT License; Lamprakos et al.,
"Futureproof Static Memory Planning", arXiv 2504.04874): two traces of MindSpore's SOMAS (the Ascend
memory planner) and three instances of the IOPDDL contest. TRACES below names each file, where it
comes from and what it is. The files are not in this repository: ``--traces DIR`` (or
``$ZCSPEC_TRACES_DIR``) names a folder holding them under the names in TRACES.

Per trace: buffers, the max-live lower bound, the arena ``pack(buffers, time_limit=T)`` reaches and
its ratio to that bound, the bound the packer proved when it is above max-live (``optimal`` when the
arena meets it), the stage that found the arena, and the time. Every packing is re-checked by the
checker's independent judge (``zcspec.checks.packing_check.validate``) before it is printed.

With MiniMalloc's CLI (``--minimalloc PATH`` or ``$ZCSPEC_MINIMALLOC``) each trace is also given to it
right after zcspec's run, at the max-live bound as its capacity (MiniMalloc decides whether a packing
fits a capacity: the bound is the arena zcspec aims at), with the same time budget; its packing is
re-checked by the same judge. zcspec's time is ``pack()`` in this process (the CSV already read);
MiniMalloc's is its process's wall time (reading its CSV included).

    python benchmarks/plan_traces.py --traces DIR [--time-limit 60] [--minimalloc PATH] [NAME ...]
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zcspec.checks.packing_check import validate
from zcspec.impl.compiler.memory.packing import Packing, lower_bound, pack, read_minimalloc_csv

IDEALLOC = "GitHub cappadokes/idealloc at a21f84d"
# file name in --traces: (label, where idealloc's repository publishes it, what it is)
TRACES = {
    "somas_resnet50.csv": ("SOMAS ResNet-50", f"{IDEALLOC}, benchmarks/somas_tensors/resnet50.csv",
                           "MindSpore SOMAS's problem for ResNet-50 on Ascend"),
    "iopddl_G_1.csv": ("IOPDDL G_1", f"{IDEALLOC}, benchmarks/iopddl/",
                       "IOPDDL contest instance G_1, as idealloc converts it"),
    "somas_pangu_2.6B.csv": ("SOMAS PanGu 2.6B", f"{IDEALLOC}, benchmarks/somas_tensors/pangu_2.6B.csv",
                             "MindSpore SOMAS's problem for PanGu-alpha 2.6B on Ascend"),
    "iopddl_S_1.csv": ("IOPDDL S_1", f"{IDEALLOC}, benchmarks/iopddl/",
                       "IOPDDL contest instance S_1, as idealloc converts it"),
    "iopddl_Y_1.csv": ("IOPDDL Y_1", f"{IDEALLOC}, benchmarks/iopddl/",
                       "IOPDDL contest instance Y_1, as idealloc converts it"),
}


def run_zcspec(buffers, lb: int, time_limit: float) -> dict:
    start = time.perf_counter()
    result = pack(buffers, time_limit=time_limit)
    seconds = time.perf_counter() - start
    _judge("zcspec", buffers, result)
    bound = result.arena if result.optimal else result.bound
    return {"arena": result.arena, "bound": bound, "optimal": result.optimal, "method": result.method,
            "seconds": seconds, "lb": lb}


def run_minimalloc(cli: str, path: Path, buffers, capacity: int, time_limit: float) -> tuple[str, float | None]:
    """MiniMalloc's CLI at ``capacity``: its wall time (the cell, and the seconds), or why it gave no packing
    (the cell, and None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name
        cmd = [cli, f"--capacity={capacity}", f"--input={path}", f"--output={out}"]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit)
        except subprocess.TimeoutExpired:
            return f"no answer in {time_limit:g} s", None
        seconds = time.perf_counter() - start
        if done.returncode != 0 or not out.exists():
            return f"failed (exit {done.returncode}) in {seconds:.1f} s", None
        offsets = _minimalloc_offsets(out)
    arena = max((offsets.get(b.id, 0) + b.size for b in buffers), default=0)
    _judge("MiniMalloc", buffers, Packing(offsets, arena, False, "minimalloc"), capacity)
    return f"{seconds:.2f} s", seconds


def _minimalloc_offsets(path: Path) -> dict[str, int]:
    """MiniMalloc's output: the input's columns and ``offset``."""
    with path.open(newline="") as f:
        return {row["id"]: int(row["offset"]) for row in csv.DictReader(f)}


def _judge(who: str, buffers, packing, capacity: int | None = None) -> None:
    violations = validate(buffers, packing, capacity=capacity)
    if violations:
        raise SystemExit(f"{who}: INVALID packing: {violations[0]} ({len(violations)} violation(s))")


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=os.environ.get("ZCSPEC_TRACES_DIR"),
                        help="folder holding the trace files named in TRACES (default $ZCSPEC_TRACES_DIR)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per trace and planner (default 60)")
    parser.add_argument("--minimalloc", default=os.environ.get("ZCSPEC_MINIMALLOC"),
                        help="MiniMalloc's CLI, run on each trace after zcspec (default $ZCSPEC_MINIMALLOC)")
    parser.add_argument("names", nargs="*", help="trace file names (default: all five)")
    args = parser.parse_args(argv)
    if args.traces is None:
        print("no trace folder: give --traces DIR or set ZCSPEC_TRACES_DIR", file=sys.stderr)
        return 2
    names = args.names or list(TRACES)
    missing = [n for n in names if n not in TRACES or not (Path(args.traces) / n).is_file()]
    if missing:
        print(f"{args.traces}: no trace {missing[0]!r} (expected one of {', '.join(TRACES)})", file=sys.stderr)
        return 2
    mm = " MiniMalloc at LB |" if args.minimalloc else ""
    print(f"| trace | buffers | max-live LB | arena | arena / LB | proved bound | zcspec s | stage |{mm} load |")
    print("|---|---|---|---|---|---|---|---|" + ("---|" if mm else "") + "---|")
    at_lb, ratios, speed = 0, [], []   # speed: zcspec's seconds / MiniMalloc's, where MiniMalloc solved
    for name in names:
        path = Path(args.traces) / name
        buffers = read_minimalloc_csv(path)
        lb = lower_bound(buffers)
        before = _load()
        r = run_zcspec(buffers, lb, args.time_limit)
        at_lb += r["arena"] == lb
        ratios.append(r["arena"] / lb)
        proved = "optimal" if r["optimal"] else (f"{r['bound']:,}" if r["bound"] > lb else "max-live only")
        theirs = ""
        if args.minimalloc:
            cell, seconds = run_minimalloc(args.minimalloc, path, buffers, lb, args.time_limit)
            theirs = f" {cell} |"
            if seconds is not None:
                speed.append(max(r["seconds"], 1e-3) / max(seconds, 1e-3))
        print(f"| {TRACES[name][0]} | {len(buffers):,} | {lb:,} | {r['arena']:,} | {r['arena'] / lb:.4f} | {proved} "
              f"| {r['seconds']:.2f} | {r['method']} |{theirs} {before} -> {_load()} |", flush=True)
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"\n{at_lb} of {len(names)} traces at the max-live bound; geometric mean arena / LB {geo:.4f} "
          f"(time limit {args.time_limit:g} s each, {os.cpu_count()} cores"
          f"{'' if args.minimalloc else '; MiniMalloc not run: no --minimalloc or ZCSPEC_MINIMALLOC'})")
    if speed:
        print(f"on the {len(speed)} trace(s) MiniMalloc solved within {args.time_limit:g} s: geometric mean of zcspec's "
              f"time / MiniMalloc's {math.exp(sum(math.log(x) for x in speed) / len(speed)):.2f} (each time at least "
              f"1 ms; pair by pair, in this run)")
    print("\nSources:")
    for name in names:
        label, source, what = TRACES[name]
        print(f"- {label} ({name}): {what}; {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
