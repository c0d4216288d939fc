"""Mutation score (issues 13 and 35): the share of impl/'s non-equivalent mutants that ``zcspec verify`` kills,
and how it kills them.

    python benchmarks/mutation_score.py [--sample N] [--seed S] [--jobs J] [--timeout S]
                                        [--suite-timeout S] [--suite identical|survivors|none] [--out FILE]
                                        [--list] [--commit REV | --worktree] [--module GLOB ...] [--whole-suite]

Samples N small mutations of impl/'s logic and tables (benchmarks/mutation/mutator.py and tables.py
list the operators and what is left alone) with a seed drawn at random unless --seed names one (it is
printed, with the command that draws the same sample again), copies the sources once per mutant into a
temporary folder, never touching the checkout, and runs ``zcspec verify --artefacts`` on each.

A mutant verify kills is attributed from the run's verdict.json: the claims it broke (which ids), the
output oracle only, a crash of the code under test, a refusal of its own artefacts or of a valid call,
one of verify's other checks, the exercise floor, the time limit. A mutant verify passes has its
artefacts (every plan, model file, device trace, output digest, the case table) compared with the
unmutated run's: if any differs it is verify's miss, whatever the suite says; if all are identical,
the test suite (``pytest -n 2 -q -x``, only there unless --suite survivors) decides between a miss
and an equivalent mutant, now one with evidence: only the tests that ran the mutated line in the
baseline's suite run, which runs under coverage (benchmarks/mutation/selection.py argues why their
verdict is the whole suite's, and names where the whole suite runs instead; --whole-suite: always).
Before the mutants, the unmutated copy must pass both judges, verify twice with identical artefacts
(the baseline, whose times set the default limits: 4x, at least 120 s). Prints one line per mutant,
then the scores with 95% Wilson intervals (overall; the claims on the silent mutants, those whose
code neither crashed, hung nor refused its artefacts; the claims alone; the claims but the oracle on
the silent ones outside the kernels) and the breakdown; writes every verdict and the output's tail to
--out as JSON. Progress goes to stderr. Exits 1 when the overall score is under --target (default 90).

Every verdict is also appended, as it comes, to a journal beside --out (``<out>.journal.jsonl``,
benchmarks/mutation/journal.py). A run that stops before its end (a figure run takes hours) resumes
when the same command is run again on the same commit: a drawn seed is then the journal's, every
verdict it holds is reused and only the rest is judged; --fresh starts over. A finished run's journal
is not resumed. The baseline's coverage data is kept beside it too (``<out>.coverage``, and its commit in
``<out>.coverage.json``) and reused by a resumed run of the same commit.
"""
from __future__ import annotations

import argparse
import json
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mutation.campaign import SUITE_WHEN, Baseline, CampaignError, Settings, baseline, judge
from mutation.journal import Identity, Journal, read_header
from mutation.mutator import in_modules, sample, sites
from mutation.runs import Interrupted, stop_all, suite_command, verify_command
from mutation.sandbox import Sandbox, SandboxError
from mutation.score import Score

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "out" / "mutation_score.json"
SEEDS = 2**31   # a drawn seed is below this
FIGURE_SAMPLE = 40   # issue 35's figure samples at least this many mutants of all impl/, with verify's defaults


def _args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=40, metavar="N", help="mutants to sample (default 40)")
    ap.add_argument("--seed", type=int, help="sampling seed (default: drawn at random, and printed)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants judged at once (default 2)")
    ap.add_argument("--timeout", type=float, help="seconds per verify run (default 4x the baseline's, >= 120)")
    ap.add_argument("--suite-timeout", type=float, help="seconds per suite run (default 4x the baseline's, >= 120)")
    ap.add_argument("--suite-workers", type=int, default=2, help="pytest-xdist workers per suite run (default 2)")
    ap.add_argument("--verify-args", default="", help="extra arguments for zcspec verify, one shell-quoted string")
    ap.add_argument("--suite-args", default="", help="extra pytest arguments (a subset, -k ...), one string")
    ap.add_argument("--suite", choices=SUITE_WHEN, default="identical",
                    help="run the suite on verify's survivors whose artefacts are identical to the unmutated run's "
                         "(default: only there does it decide anything), on all of verify's survivors, or on none "
                         "(then identical artefacts alone make a mutant equivalent)")
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
    ap.add_argument("--skip-baseline", action="store_true",
                    help="run verify once on the unmutated copy (for its artefacts) and not the suite")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies (their folder is printed)")
    ap.add_argument("--whole-suite", action="store_true",
                    help="run the whole suite on each mutant the suite judges, not only the tests that ran its line "
                         "(then the baseline's suite runs without coverage)")
    ap.add_argument("--fresh", action="store_true",
                    help="start over: do not resume the unfinished run the journal beside --out holds")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.sample < 1:
        ap.error(f"--sample must be >= 1, got {args.sample}")
    args.drawn = args.seed is None
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
        if isinstance(e, CampaignError) and e.evidence:   # the folders the error names: kept to be compared
            args.keep = True
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


def _identity(args, commit: str, seed: int) -> Identity:
    return Identity(commit, seed, args.sample, tuple(args.module), tuple(shlex.split(args.verify_args)),
                    tuple(shlex.split(args.suite_args)), args.suite, args.suite_workers, args.timeout,
                    args.suite_timeout)


def _journal(args, commit: str | None) -> Journal | None:
    """The run's journal (None for --worktree: a working tree has no identity to resume by). Sets the seed
    when none was given: the journal's if it holds an unfinished run of this command on this commit, else
    a drawn one."""
    path = args.out.with_suffix(".journal.jsonl")
    if args.fresh:
        path.unlink(missing_ok=True)
    if args.drawn:
        header = read_header(path) if commit is not None else None
        seed = (header or {}).get("run", {}).get("seed")
        resumable = (isinstance(seed, int) and not header["finished"]
                     and header["run"] == _identity(args, commit, seed).to_json())
        args.seed = seed if resumable else secrets.randbelow(SEEDS)
    if commit is None:
        return None
    journal = Journal.open(path, _identity(args, commit, args.seed))
    if journal.resumed:
        print(f"resuming the unfinished run in {path}: {journal.resumed} verdicts recorded", file=sys.stderr)
    return journal


def _campaign(args, commit: str | None, workdir: Path) -> int:
    journal = None if args.list else _journal(args, commit)
    if args.seed is None:   # --list draws its seed here; it keeps no journal
        args.seed = secrets.randbelow(SEEDS)
    pristine = Sandbox.create(REPO, workdir / "pristine", commit)
    all_sites = in_modules(sites(pristine.tree), args.module)
    chosen = sample(all_sites, args.sample, args.seed, pristine.tree)
    source = f"commit {commit[:10]}" if commit else "the working tree"
    modules = len({m.path for m in all_sites})
    print(f"mutation score: {len(chosen)} mutants sampled (seed {args.seed}{', drawn' if args.drawn else ''}) from "
          f"{len(all_sites)} sites in {modules} modules of impl/ at {source}"
          + (f" (--module {' '.join(args.module)})" if args.module else ""))
    if args.drawn:
        print(f"the same sample: {_rerun(args)}")
    if len(chosen) < FIGURE_SAMPLE or args.module or args.verify_args:
        print(f"(a sample under {FIGURE_SAMPLE}, of some modules or with other verify arguments: "
              "not issue 35's figure)")
    if args.list:
        for m in chosen:
            print(f"  {m.label:<48} {m.describe()}")
        return 0
    settings = Settings(jobs=args.jobs, verify_args=tuple(shlex.split(args.verify_args)),
                        suite_workers=args.suite_workers, suite_args=tuple(shlex.split(args.suite_args)),
                        verify_timeout=args.timeout, suite_timeout=args.suite_timeout, keep=args.keep,
                        suite=args.suite, commit=commit,
                        coverage=None if args.whole_suite or args.suite == "none" else _coverage_path(args.out))
    t0 = time.monotonic()
    pending = journal is None or any(journal.verify(i, m) is None for i, m in enumerate(chosen))
    limits = baseline(pristine, workdir, settings, _progress, full=not args.skip_baseline, journal=journal,
                      artefacts=pending)
    print(f"verify: {_command(verify_command(list(settings.verify_args), Path('DIR')))} "
          f"({_baseline_text(limits, 'verify')})\n"
          f"suite:  {_command(suite_command(settings.suite_workers, list(settings.suite_args)))} "
          f"({_baseline_text(limits, 'suite')}; run on {args.suite})\n", flush=True)
    outcomes = judge(chosen, pristine, workdir, settings, limits, _progress, journal)
    for o in outcomes:
        print(f"  {o.mutation.label:<48} {o.mutation.describe()}\n  {'':<48} {_verdict(o)}; {o.seconds:.0f} s")
    score = _summary(outcomes)
    _write(args, commit, len(all_sites), limits, outcomes, score, time.monotonic() - t0)
    if journal is not None:
        journal.finish()
    return 0 if score.percent is not None and score.percent >= args.target else 1


def _coverage_path(out: Path) -> Path:
    """Where the baseline suite's coverage data is kept: beside --out and its journal."""
    return out.with_suffix(".coverage")


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _rerun(args) -> str:
    """The command with the drawn seed named (and --list left out)."""
    kept = [a for a in args.argv if a != "--list"]
    return "python benchmarks/mutation_score.py " + " ".join(shlex.quote(a) for a in [*kept, "--seed", str(args.seed)])


def _verdict(o) -> str:
    if o.verify.killed:
        return f"verify killed: {o.kill.short()}"
    suite = f"; suite {o.suite.short()}" if o.suite else ""
    return f"verify passed; {o.why_missed or 'artefacts identical'}{suite} [{o.status}]"


def _baseline_text(limits: Baseline, judge_name: str) -> str:
    run = getattr(limits, judge_name)
    limit = getattr(limits, f"{judge_name}_timeout")
    return (f"baseline {run.seconds:.1f} s, " if run else "no baseline, ") + f"limit {limit:.0f} s"


def _summary(outcomes) -> Score:
    score = Score.of(outcomes)
    print("\n" + "\n".join(score.lines()))
    groups = [("verify's misses", score.missed),
              ("equivalent on verify's cases (every artefact identical)", score.equivalent)]
    if score.undecided:
        groups.append(("undecided (artefacts identical; the suite's failure was not the mutant's)", score.undecided))
    for title, group in groups:
        print(f"{title}: {len(group)}")
        for o in group:
            print(f"  {o.mutation.label} {o.mutation.describe()}" + (f" [{o.why_missed}]" if o.why_missed else ""))
    return score


def _write(args, commit, n_sites, limits: Baseline, outcomes, score: Score, seconds: float) -> None:
    result = {
        "command": "python benchmarks/mutation_score.py " + " ".join(shlex.quote(a) for a in args.argv),
        "same_sample": _rerun(args) if args.drawn else None,
        "source": commit or "worktree", "seed": args.seed, "sample": len(outcomes), "sites": n_sites,
        "modules": args.module,
        "baseline": {"verify": limits.verify.to_json(),
                     "suite": limits.suite.to_json() if limits.suite else None,
                     "verify_timeout": limits.verify_timeout, "suite_timeout": limits.suite_timeout,
                     "coverage": str(limits.coverage.data) if limits.coverage else None},
        "seed_drawn": args.drawn, "suite_on": args.suite,
        "verify_killed": len(score.killed), "missed": len(score.missed), "equivalent": len(score.equivalent),
        "score_percent": None if score.percent is None else round(score.percent, 1),
        "scores": score.to_json(), "summary": score.lines(),
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
