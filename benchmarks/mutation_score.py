"""Mutation score (issue 13): the share of impl/'s non-equivalent mutants that ``zcspec verify`` alone kills.

    python benchmarks/mutation_score.py [--sample N] [--seed S] [--jobs J] [--timeout S]
                                        [--suite-timeout S] [--out FILE] [--list] [--commit REV | --worktree]
                                        [--module GLOB ...]

Samples N small mutations of impl/'s logic (benchmarks/mutation/mutator.py lists the operators and
what is left alone), copies the sources once per mutant into a temporary folder, never touching
the checkout, and judges each mutant: ``zcspec verify`` first (killed: a non-zero exit, a crash or
a time-out), then, for verify's survivors, the test suite (``pytest -n 2 -q -x``). A mutant that the
suite kills and verify did not is verify's miss; one that neither kills is probably equivalent and
is listed. Before the mutants, the unmutated copy must pass both (the baseline), whose times set
the default limits (4x, at least 120 s). Prints one line per mutant and "verify kills X of Y
non-equivalent mutants = Z%"; writes every verdict and the output's tail to --out as JSON.
Progress goes to stderr. Exits 1 when Z is under --target (default 90).
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mutation.campaign import Baseline, CampaignError, Score, Settings, baseline, judge
from mutation.mutator import in_modules, mutable_files, sample, sites
from mutation.runs import Interrupted, stop_all, suite_command, verify_command
from mutation.sandbox import Sandbox, SandboxError

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "out" / "mutation_score.json"
UNLIMITED_VERIFY, UNLIMITED_SUITE = 600.0, 1800.0  # limits with --skip-baseline and no --timeout


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=30, metavar="N", help="mutants to sample (default 30)")
    ap.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants judged at once (default 2)")
    ap.add_argument("--timeout", type=float, help="seconds per verify run (default 4x the baseline's, >= 120)")
    ap.add_argument("--suite-timeout", type=float, help="seconds per suite run (default 4x the baseline's, >= 120)")
    ap.add_argument("--suite-workers", type=int, default=2, help="pytest-xdist workers per suite run (default 2)")
    ap.add_argument("--verify-args", default="", help="extra arguments for zcspec verify, one shell-quoted string")
    ap.add_argument("--suite-args", default="", help="extra pytest arguments (a subset, -k ...), one string")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="JSON result file (default out/mutation_score.json in the checkout, a git-ignored folder)")
    ap.add_argument("--module", action="append", default=[], metavar="GLOB",
                    help="sample only from impl/ modules matching GLOB (repeatable; e.g. impl/runtime/acl.py, "
                         "'impl/compiler/memory/packing/*'): a focused score, not the issue's figure")
    ap.add_argument("--list", action="store_true", help="only print the sampled mutants")
    ap.add_argument("--target", type=float, default=90.0, help="exit 1 below this verify score in %% (default 90)")
    source = ap.add_mutually_exclusive_group()
    source.add_argument("--commit", default="HEAD", help="mutate the sources at this commit (default HEAD)")
    source.add_argument("--worktree", action="store_true", help="mutate the working tree as it is, uncommitted edits too")
    ap.add_argument("--skip-baseline", action="store_true", help="do not run the judges on the unmutated copy first")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies (their folder is printed)")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.sample < 1:
        ap.error(f"--sample must be >= 1, got {args.sample}")
    return args


def main(argv=None) -> int:
    args = _args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="zcspec-mutants-"))
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        return _campaign(args, None if args.worktree else _resolve(args.commit), workdir)
    except (CampaignError, SandboxError, ValueError) as e:
        print(f"mutation_score: error: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Interrupted):
        print("mutation_score: interrupted; the judges running were stopped, no result written", file=sys.stderr)
        return 130
    finally:
        if args.keep:
            print(f"copies kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _interrupt(signum, frame):
    # Kill the judges first: the thread pool waits for its runs before the exception gets out.
    stop_all()
    raise KeyboardInterrupt


def _campaign(args, commit: str | None, workdir: Path) -> int:
    pristine = Sandbox.create(REPO, workdir / "pristine", commit)
    all_sites = in_modules(sites(pristine.tree), args.module)
    chosen = sample(all_sites, args.sample, args.seed, pristine.tree)
    source = f"commit {commit[:10]}" if commit else "the working tree"
    modules = len({m.path for m in all_sites}) if args.module else len(mutable_files(pristine.tree))
    print(f"mutation score: {len(chosen)} mutants sampled (seed {args.seed}) from {len(all_sites)} sites in "
          f"{modules} modules of impl/ at {source}" + (f" (--module {' '.join(args.module)})" if args.module else ""))
    if args.list:
        for m in chosen:
            print(f"  {m.label:<48} {m.describe()}")
        return 0
    settings = Settings(jobs=args.jobs, verify_args=tuple(shlex.split(args.verify_args)),
                        suite_workers=args.suite_workers, suite_args=tuple(shlex.split(args.suite_args)),
                        verify_timeout=args.timeout, suite_timeout=args.suite_timeout, keep=args.keep)
    t0 = time.monotonic()
    limits = _limits(args, pristine, settings, _progress)
    print(f"verify: {_command(verify_command(list(settings.verify_args)))} ({_baseline_text(limits, 'verify')})\n"
          f"suite:  {_command(suite_command(settings.suite_workers, list(settings.suite_args)))} "
          f"({_baseline_text(limits, 'suite')})\n", flush=True)
    outcomes = judge(chosen, pristine, workdir, settings, limits, _progress)
    for o in outcomes:
        suite = o.suite.short() if o.suite else "-"
        print(f"  {o.mutation.label:<48} {o.mutation.describe()}\n"
              f"  {'':<48} verify {o.verify.short()}; suite {suite}; {o.seconds:.0f} s")
    score = _summary(outcomes)
    _write(args, commit, len(all_sites), limits, outcomes, score, time.monotonic() - t0)
    return 0 if score.percent is not None and score.percent >= args.target else 1


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _limits(args, pristine: Sandbox, settings: Settings, progress) -> Baseline:
    if not args.skip_baseline:
        return baseline(pristine, settings, progress)
    return Baseline(None, None, args.timeout or UNLIMITED_VERIFY, args.suite_timeout or UNLIMITED_SUITE)


def _baseline_text(limits: Baseline, judge_name: str) -> str:
    run = getattr(limits, judge_name)
    limit = getattr(limits, f"{judge_name}_timeout")
    return (f"baseline {run.seconds:.1f} s, " if run else "no baseline, ") + f"limit {limit:.0f} s"


def _summary(outcomes) -> Score:
    score = Score.of(outcomes)
    print("\n" + score.sentence())
    for title, group in (("verify's misses (killed by the suite only)", score.missed),
                         ("probably equivalent (neither kills them)", score.equivalent)):
        print(f"{title}: {len(group)}")
        for o in group:
            why = f" [suite {o.suite.short()}]" if o.suite and o.suite.killed else ""
            print(f"  {o.mutation.label} {o.mutation.describe()}{why}")
    return score


def _write(args, commit, n_sites, limits: Baseline, outcomes, score: Score, seconds: float) -> None:
    result = {
        "command": "python benchmarks/mutation_score.py " + " ".join(shlex.quote(a) for a in args.argv),
        "source": commit or "worktree", "seed": args.seed, "sample": len(outcomes), "sites": n_sites,
        "modules": args.module,
        "baseline": {"verify": limits.verify.to_json() if limits.verify else None,
                     "suite": limits.suite.to_json() if limits.suite else None,
                     "verify_timeout": limits.verify_timeout, "suite_timeout": limits.suite_timeout},
        "verify_killed": len(score.killed), "suite_killed": len(score.missed), "equivalent": len(score.equivalent),
        "score_percent": None if score.percent is None else round(score.percent, 1),
        "summary": score.sentence(),
        "seconds": round(seconds, 1),
        "mutants": [o.to_json() for o in outcomes],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"\nresult written to {args.out} ({seconds:.0f} s in all)")


def _command(cmd: list[str]) -> str:
    return " ".join(shlex.quote(Path(c).name if i < 2 and "/" in c else c) for i, c in enumerate(cmd))


def _resolve(rev: str) -> str:
    run = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise ValueError(f"--commit {rev!r} is not a commit of {str(REPO)!r}: {run.stderr.strip()}")
    return run.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
