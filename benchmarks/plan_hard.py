"""Pack MiniMalloc's eleven "challenging" instances into their 1 MiB capacity.

Prints, per instance: buffers, lower bound, greedy by size (best fit) arena,
the arena ``pack(..., capacity=...)`` reaches within the time limit, its
ratio to the capacity, and the time. Every packing is re-checked by the
checker's independent judge of packings (``zcspec.checks.packing_check.validate``) before it is reported.

    python benchmarks/plan_hard.py [--data DIR] [--time-limit 60] [A B ...]
    python benchmarks/plan_hard.py --minimise            # no capacity: what the minimiser reaches and proves
    python benchmarks/plan_hard.py --minimalloc PATH     # MiniMalloc's CLI against zcspec's, pair by pair

DIR (MiniMalloc's challenging instances, github google/minimalloc ``benchmarks/asplos2024``)
defaults to $ZCSPEC_MINIMALLOC_DIR, else shared/data/minimalloc-challenging in the folder that
holds the repository.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zcspec.checks.packing_check import validate
from zcspec.impl.compiler.memory.packing import greedy, lower_bound, pack, read_minimalloc_csv

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO.parent / "shared" / "data" / "minimalloc-challenging"


def run_one(path: Path, time_limit: float) -> dict:
    capacity = int(re.search(r"\.(\d+)\.csv$", path.name).group(1))
    buffers = read_minimalloc_csv(path)
    inst = greedy.Instance.of(buffers)
    greedy_arena = inst.arena(greedy.best_fit(inst, greedy.order_by_size(inst)))
    start = time.perf_counter()
    result = pack(buffers, capacity=capacity, time_limit=time_limit)
    seconds = time.perf_counter() - start
    violations = validate(buffers, result)  # not against the capacity: missing it is reported, not invalid
    if violations:
        raise SystemExit(f"{path.name}: INVALID packing: {violations[0]} ({len(violations)} violation(s))")
    return {"name": path.name.split(".")[0], "buffers": len(buffers), "lb": lower_bound(buffers),
            "greedy": greedy_arena, "arena": result.arena, "capacity": capacity, "seconds": seconds,
            "method": result.method}


def minimise_one(path: Path, time_limit: float) -> dict:
    """Pack without a capacity: the arena the minimiser reaches in ``time_limit`` and what it proved."""
    buffers = read_minimalloc_csv(path)
    start = time.perf_counter()
    result = pack(buffers, time_limit=time_limit)
    seconds = time.perf_counter() - start
    violations = validate(buffers, result)
    if violations:
        raise SystemExit(f"{path.name}: INVALID packing: {violations[0]} ({len(violations)} violation(s))")
    return {"name": path.name.split(".")[0], "lb": lower_bound(buffers), "arena": result.arena,
            "optimal": result.optimal, "bound": result.bound, "seconds": seconds}


def minimise(files, time_limit: float) -> int:
    print("| instance | LB | arena | arena / LB | proved | time s |")
    print("|---|---|---|---|---|---|")
    at_lb = 0
    for path in files:
        r = minimise_one(path, time_limit)
        at_lb += r["arena"] == r["lb"]
        proved = "optimal" if r["optimal"] else (f"bound {r['bound']:,}" if r["bound"] > r["lb"] else "gap open")
        print(f"| {r['name']} | {r['lb']:,} | {r['arena']:,} | {r['arena'] / r['lb']:.4f} | {proved} "
              f"| {r['seconds']:.1f} |", flush=True)
    print(f"\n{at_lb} of {len(files)} instances at the lower bound without a capacity "
          f"(time limit {time_limit:g} s each, {os.cpu_count()} cores)")
    return 0


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({run.returncode}): {(run.stderr or run.stdout)[-300:]}")
    return seconds


def against_minimalloc(files, minimalloc: str, time_limit: float, passes: int) -> int:
    """MiniMalloc's CLI and ``zcspec plan --buffers`` on each instance at its capacity, back to back,
    ``passes`` times; both wall times (process start included for both) and their ratio, medians."""
    print(f"| instance | MiniMalloc s | zcspec s | zcspec / MiniMalloc |   (median of {passes} passes)")
    print("|---|---|---|---|")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            capacity = int(re.search(r"\.(\d+)\.csv$", path.name).group(1))
            theirs, ours = [], []
            for _ in range(passes):
                theirs.append(_wall([minimalloc, f"--capacity={capacity}", f"--input={path}",
                                     f"--output={os.path.join(tmp, path.name)}"]))
                ours.append(_wall([sys.executable, "-m", "zcspec.checks.cli.main", "plan", "--buffers", str(path),
                                   "--strategy", "compact", "--capacity", str(capacity),
                                   "--time-limit", str(time_limit)]))
            t, o = statistics.median(theirs), statistics.median(ours)
            ratios.append(o / t)
            print(f"| {path.name.split('.')[0]} | {t:.2f} | {o:.2f} | {o / t:.2f} |", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ngeometric mean of zcspec / MiniMalloc: {geomean:.2f}; largest {max(ratios):.2f} "
          f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the end)")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("ZCSPEC_MINIMALLOC_DIR", DEFAULT)))
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per instance (default 60)")
    parser.add_argument("--minimise", action="store_true",
                        help="no capacity: minimise the arena in the time limit and print what was proved")
    parser.add_argument("--minimalloc", metavar="PATH",
                        help="MiniMalloc's CLI: time it and `zcspec plan --buffers` back to back (docs/packing.md)")
    parser.add_argument("--passes", type=int, default=3, help="with --minimalloc: passes per instance (median)")
    parser.add_argument("names", nargs="*", help="instance letters (default: all)")
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("*.csv"))
    if args.names:
        files = [f for f in files if f.name.split(".")[0] in args.names]
    if not files:
        print(f"no instances found in {args.data} (set --data or ZCSPEC_MINIMALLOC_DIR)", file=sys.stderr)
        return 2
    if args.minimise:
        return minimise(files, args.time_limit)
    if args.minimalloc:
        return against_minimalloc(files, args.minimalloc, args.time_limit, args.passes)
    print("| instance | buffers | LB | greedy (best fit) | compact arena | arena / capacity | time s | method |")
    print("|---|---|---|---|---|---|---|---|")
    fitted = 0
    for path in files:
        r = run_one(path, args.time_limit)
        fitted += r["arena"] <= r["capacity"]
        print(f"| {r['name']} | {r['buffers']} | {r['lb']:,} | {r['greedy']:,} ({r['greedy'] / r['capacity']:.2f}x)"
              f" | {r['arena']:,} | {r['arena'] / r['capacity']:.3f} | {r['seconds']:.1f} | {r['method']} |", flush=True)
    print(f"\n{fitted} of {len(files)} instances packed within capacity "
          f"(time limit {args.time_limit:g} s each, {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
