"""How much of what the test suite reaches in impl/ ``zcspec verify`` reaches too: branch coverage side by side.

    python benchmarks/verify_coverage.py [--verify-data FILE] [--suite-data FILE] [--rerun] [--below 0.9]

Runs ``zcspec verify`` under coverage.py with branch measurement (``--source impl``), and the test suite
(``pytest -n 2`` under pytest-cov, the Hypothesis profile ``ci`` as CI runs it), or reads earlier runs'
data files. For every impl/ module, and for the areas the mutation score depends on (the memory planner,
the passes, task generation, the model file, the runtimes, the device's memory), it prints the arcs
(line-to-line transitions: branches taken and not) the suite executes, how many of those verify executes
too, and the ratio: a module where verify reaches under ``--below`` (default 0.9) of what the suite does
is where a silent bug can pass verify while the suite would see it. The suite's arcs the verify run
misses are what new zoo builtins or campaign draws should reach.

Needs ``pip install coverage pytest-cov`` (not a dependency of zcspec). Exit 0 when every area is at or
above ``--below``, 1 when one is below (the table is printed either way), 2 on bad arguments or a run
that produced no data.
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The areas issue 35 names, as path prefixes under impl/.
AREAS = (
    ("compiler/memory", "impl/compiler/memory/"),
    ("compiler/passes", "impl/compiler/passes/"),
    ("compiler/tasks", "impl/compiler/tasks/"),
    ("compiler/model_file", "impl/compiler/model_file/"),
    ("runtime", "impl/runtime/"),
    ("device memory", "impl/device/memory.py"),
)


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verify-data", default=str(ROOT / "out" / "verify.branch.coverage"),
                    help="verify's coverage data (default out/verify.branch.coverage); made unless it exists")
    ap.add_argument("--suite-data", default=str(ROOT / "out" / "suite.branch.coverage"),
                    help="the suite's coverage data (default out/suite.branch.coverage); made unless it exists")
    ap.add_argument("--rerun", action="store_true", help="run verify and the suite again even if the data exist")
    ap.add_argument("--below", type=float, default=0.9, help="the reach under which an area is listed as short")
    ap.add_argument("--modules", type=int, default=15, help="modules to list, shortest reach first (default 15)")
    ap.add_argument("--workers", default="2", help="pytest-xdist workers for the suite (default 2)")
    args = ap.parse_args(argv)
    if not 0 < args.below <= 1:
        ap.error("--below must be in (0, 1]")
    return args


def _run_verify(data: Path) -> str:
    zcspec = shutil.which("zcspec")
    if zcspec is None:
        raise SystemExit("no zcspec command on PATH: pip install -e . first")
    print(f"running zcspec verify under coverage (branches) into {data.name} ...", flush=True)
    return _logged([sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={data}",
                    f"--source={ROOT / 'impl'}", zcspec, "verify", "--quiet"], data.with_suffix(".log"), os.environ)


def _run_suite(data: Path, workers: str) -> str:
    print(f"running the test suite under coverage (branches, -n {workers}) into {data.name} ...", flush=True)
    env = dict(os.environ, COVERAGE_FILE=str(data), CI="1")
    return _logged([sys.executable, "-m", "pytest", "-q", "-n", workers, "-p", "no:cacheprovider",
                    f"--cov={ROOT / 'impl'}", "--cov-branch", "--cov-report=", "--no-header"],
                   data.with_suffix(".log"), env)


def _logged(cmd: list[str], log: Path, env) -> str:
    """Run ``cmd`` in the checkout with its output in ``log``; its exit code and last line, for the figure
    (the full output of a verify or suite run would bury the table)."""
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.run(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    lines = [line.strip() for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return f"{code} ({lines[-1] if lines else 'no output'}; the whole output in {log.name})"


def _arcs(data_file: Path) -> dict[str, set]:
    import coverage
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    data = cov.get_data()
    if not data.has_arcs():
        raise SystemExit(f"{data_file}: measured without branches; rerun with --rerun")
    out = {}
    for path in data.measured_files():
        rel = Path(path).resolve()
        if rel.is_relative_to(ROOT / "impl"):
            out[str(rel.relative_to(ROOT))] = set(data.arcs(path) or ())
    if not out:
        raise SystemExit(f"{data_file}: no impl/ file measured")
    return out


def reach_table(verify: dict[str, set], suite: dict[str, set]):
    """Per module: (suite arcs, of them reached by verify too)."""
    return {m: (len(s), len(s & verify.get(m, set()))) for m, s in suite.items() if s}


def main(argv=None) -> int:
    args = _args(argv)
    try:
        import coverage  # noqa: F401
    except ImportError:
        print("verify_coverage.py needs coverage.py and pytest-cov: pip install coverage pytest-cov", file=sys.stderr)
        return 2
    vdata, sdata = Path(args.verify_data), Path(args.suite_data)
    for data in (vdata, sdata):
        data.parent.mkdir(parents=True, exist_ok=True)
    if args.rerun or not vdata.exists():
        print(f"verify exited with {_run_verify(vdata)}")
    if args.rerun or not sdata.exists():
        print(f"the suite exited with {_run_suite(sdata, args.workers)}")
    table = reach_table(_arcs(vdata), _arcs(sdata))
    areas = collections.OrderedDict((name, [0, 0]) for name, _ in AREAS)
    for module, (s, v) in table.items():
        for name, prefix in AREAS:
            if module.startswith(prefix):
                areas[name][0] += s
                areas[name][1] += v
    total_s, total_v = sum(s for s, _ in table.values()), sum(v for _, v in table.values())
    print(f"\nimpl/ arcs the suite executes: {total_s:,}; verify executes {total_v:,} of them "
          f"({total_v / total_s:.1%})\n")
    print("| area | suite's arcs | verify reaches | reach |")
    print("|---|---|---|---|")
    short = []
    for name, (s, v) in areas.items():
        ratio = v / s if s else 1.0
        short += [name] if ratio < args.below else []
        print(f"| {name} | {s:,} | {v:,} | {ratio:.1%}{' (short)' if ratio < args.below else ''} |")
    print(f"\nmodules, shortest reach first (the {args.modules} of at least 20 suite arcs):\n")
    print("| module | suite's arcs | verify reaches | reach |")
    print("|---|---|---|---|")
    ranked = sorted(((v / s, m, s, v) for m, (s, v) in table.items() if s >= 20))
    for ratio, m, s, v in ranked[:args.modules]:
        print(f"| {m} | {s:,} | {v:,} | {ratio:.1%} |")
    if short:
        print(f"\nareas under {args.below:.0%} of the suite's reach: {', '.join(short)}")
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
