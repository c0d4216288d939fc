"""Which mutation sites ``zcspec verify`` never executes (issue 13): a mutant there can only survive verify.

    python benchmarks/verify_reach.py [--data FILE] [--top N] [-- VERIFY ARGS...]

Runs ``zcspec verify`` under coverage.py (``--source impl``; needs ``pip install coverage``), or reads an
earlier run's data file (``--data`` of an existing file), then lists every site of
benchmarks/mutation/mutator.py whose statement verify did not execute: the total and the modules with the most.
A site counts as executed when any line of the statement holding it ran (a table row on a continuation line
runs with its statement's first line), a site at import when its module was imported; a site inside a function
numba compiles is counted apart, since coverage.py never sees such code run (benchmarks/mutation/selection.py
``site_of`` says which is which, as for the mutation score's suite selection).
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

try:
    import coverage
    from benchmarks.mutation.selection import AT_IMPORT, NUMBA, site_of
except ImportError:   # coverage.py is not a dependency of zcspec: say so when the script runs
    coverage = None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT / "out" / "verify.coverage"),
                    help="coverage data file (default out/verify.coverage); run verify into it unless it exists")
    ap.add_argument("--rerun", action="store_true", help="run verify again even if the data file exists")
    ap.add_argument("--top", type=int, default=20, help="modules to list (default 20)")
    ap.add_argument("verify_args", nargs="*", help="extra arguments for zcspec verify (after --)")
    args = ap.parse_args(argv)
    if coverage is None:
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
    missed, total, compiled, lines, sources = (collections.Counter(), collections.Counter(), collections.Counter(),
                                               {}, {})
    for m in all_sites:
        path = str(ROOT / m.path)
        if path not in lines:
            lines[path] = set(executed.lines(path) or ())
            sources[path] = (ROOT / m.path).read_text(encoding="utf-8")
        total[m.path] += 1
        why, statement = site_of(sources[path], m)
        if why == NUMBA:
            compiled[m.path] += 1
        elif why == AT_IMPORT:
            missed[m.path] += not lines[path]
        else:
            missed[m.path] += not lines[path].intersection(statement)
    n, c = sum(missed.values()), sum(compiled.values())
    print(f"{n} of {len(all_sites)} mutation sites ({n / len(all_sites):.1%}) are in statements verify never "
          f"executes; {c} more ({c / len(all_sites):.1%}) are in functions numba compiles, which coverage.py cannot "
          f"see run ({', '.join(f'{k} in {p}' for p, k in compiled.most_common())})")
    for path, k in missed.most_common(args.top):
        if k:
            print(f"  {k:4d} of {total[path]:4d}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
