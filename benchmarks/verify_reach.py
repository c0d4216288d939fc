"""Which mutation sites ``zcspec verify`` never executes (issue 13): a mutant there can only survive verify.

    python benchmarks/verify_reach.py [--data FILE] [--top N] [-- VERIFY ARGS...]

Runs ``zcspec verify`` under coverage.py (``--source impl``; needs ``pip install coverage``), or reads an
earlier run's data file (``--data`` of an existing file), then lists every site of
benchmarks/mutation/mutator.py whose line verify did not execute: the total and the modules with the most.
"""
from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.mutation.mutator import sites  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "out" / "verify.coverage"),
                    help="coverage data file (default out/verify.coverage); run verify into it unless it exists")
    ap.add_argument("--rerun", action="store_true", help="run verify again even if the data file exists")
    ap.add_argument("--top", type=int, default=20, help="modules to list (default 20)")
    ap.add_argument("verify_args", nargs="*", help="extra arguments for zcspec verify (after --)")
    args = ap.parse_args(argv)
    try:
        import coverage
    except ImportError:
        print("verify_reach.py needs coverage.py: pip install coverage", file=sys.stderr)
        return 2
    data = Path(args.data)
    if args.rerun or not data.exists():
        data.parent.mkdir(parents=True, exist_ok=True)
        zcspec = shutil.which("zcspec")
        if zcspec is None:
            print("no zcspec command on PATH: pip install -e . first", file=sys.stderr)
            return 2
        print(f"running zcspec verify under coverage into {data} ...", flush=True)
        run = subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}",
                              f"--source={ROOT / 'impl'}", zcspec, "verify", "--quiet", *args.verify_args])
        print(f"verify exited with {run.returncode}")
    cov = coverage.Coverage(data_file=str(data))
    cov.load()
    executed = cov.get_data()
    all_sites = sites(ROOT)
    missed, total, lines = collections.Counter(), collections.Counter(), {}
    for m in all_sites:
        path = str(ROOT / m.path)
        if path not in lines:
            lines[path] = set(executed.lines(path) or ())
        total[m.path] += 1
        missed[m.path] += m.line not in lines[path]
    n = sum(missed.values())
    print(f"{n} of {len(all_sites)} mutation sites ({n / len(all_sites):.1%}) are on lines verify never executes")
    for path, k in missed.most_common(args.top):
        if k:
            print(f"  {k:4d} of {total[path]:4d}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
