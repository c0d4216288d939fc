"""Which fields of the spec's observations does a claim see change? (issue 35: observer fields no claim reads)

A mutant of an observer that writes one field wrong passes verify when no claim's verdict depends on
that field: the mutation runs found such fields one sample at a time (a region's ``backed`` taken after
the unload; a refused model file's build facts). This script looks for all of them at once. It reads
the observations a ``zcspec verify --artefacts DIR`` run wrote (every plan, model file, load, execute
call and device probe, as the spec's codec writes them), and for every field of every observation
kind, down to the leaves (``load.regions[].backed``, ``events[].size``), it changes that field in every
place it occurs in one observation (a bool flipped, a number plus one, a name or label replaced by
another), parses the result with the spec's strict reader and checks it with every claim. It does so
on up to ``--per-field`` observations that hold the field, and says per field:

- ``seen``: some claim's violations changed, or the reader refused the changed observation as
  inconsistent: a wrong value there is seen;
- ``precondition``: only which claims the observation exercised changed: a wrong value there can
  make a claim vacuous, silently;
- ``unseen``: nothing changed on any observation tried: a wrong value there, of the kinds tried, passes
  verify (a claim may still read the field in a direction these changes do not take).

A changed observation the spec crashes on (rather than refusing it or judging it) is listed at the end:
a bug of the spec's reader or of a claim.

Usage:
    python benchmarks/observation_fields.py                  # runs zcspec verify --artefacts first (~3 min)
    python benchmarks/observation_fields.py --artefacts DIR  # the artefacts of an earlier verify run
"""
from __future__ import annotations

import argparse
import collections
import copy
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

import attrs

from zcspec.spec.check import check
from zcspec.spec.errors import SpecError
from zcspec.spec.observables import OBSERVATION_KINDS, from_data

ELEMENT = "[]"   # a path segment: every item of a list
VALUE = "{}"     # a path segment: every value of an object


def field_paths(cls: type, prefix: tuple = (), depth: int = 0):
    """``(path, leaf type)`` for every scalar leaf reachable from ``cls``'s fields by its type hints."""
    for f in attrs.fields(cls):
        yield from _paths_of(typing.get_type_hints(cls)[f.name], prefix + (f.name,), depth)


def _paths_of(tp: Any, path: tuple, depth: int):
    origin = typing.get_origin(tp)
    if attrs.has(tp):
        if depth < 4:
            yield from field_paths(tp, path, depth + 1)
        return
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(options) == 1:
            yield from _paths_of(options[0], path, depth)
        else:
            yield path, tp
        return
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            yield from _paths_of(args[0], path + (ELEMENT,), depth)
        else:   # a fixed pair: each position its own leaf
            for i, a in enumerate(args):
                yield from _paths_of(a, path + (i,), depth)
        return
    if origin is dict:
        yield from _paths_of(typing.get_args(tp)[1], path + (VALUE,), depth)
        return
    yield path, tp


def _leaves(data, path: tuple):
    """``(container, key)`` of every non-null value at ``path`` in JSON ``data``."""
    if not path:
        return
    head, rest = path[0], path[1:]
    if head == ELEMENT:
        items = list(enumerate(data)) if isinstance(data, list) else []
    elif head == VALUE:
        items = list(data.items()) if isinstance(data, dict) else []
    elif isinstance(head, int):
        items = [(head, data[head])] if isinstance(data, list) and head < len(data) else []
    else:
        items = [(head, data[head])] if isinstance(data, dict) and head in data else []
    for key, value in items:
        if rest:
            yield from _leaves(value, rest)
        elif value is not None:
            yield data, key


def changed(value, tp, one: bool):
    """Another value of the leaf's type: a bool flipped, a label replaced by another, a name suffixed; a
    number plus one where one leaf changes, doubled plus one where every leaf does (so that a shift of
    every address or step by the same amount, which keeps every relation, is not all that is tried)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 if one else 2 * value + 1
    if isinstance(value, float):
        return value + 1.0 if one else 2 * value + 1.0
    if isinstance(value, str):
        if typing.get_origin(tp) is Literal:
            others = [a for a in typing.get_args(tp) if a != value and isinstance(a, str)]
            return others[0] if others else None
        return value + "_"
    return None


def perturb(data, path: tuple, tp, one: int | None) -> Any | None:
    """A deep copy of ``data`` with the leaves at ``path`` changed: every one (``one`` None) or the leaf
    of that index; None when there is none to change."""
    out = copy.deepcopy(data)
    leaves = list(_leaves(out, path))
    if one is not None:
        leaves = leaves[one:one + 1]
    n = 0
    for container, key in leaves:
        new = changed(container[key], tp, one is not None)
        if new is not None:
            container[key], n = new, n + 1
    return out if n else None


def verdict(report) -> tuple:
    return (tuple(sorted(collections.Counter(v.invariant_id for v in report.violations).items())),
            tuple(sorted(report.exercised)))


def load_observations(folder: Path) -> tuple[dict[str, list], int]:
    """Every observation in the artefacts' case files, by kind, as JSON data; and how many none parses
    (the threaded runs' observations, whose addresses the artefacts write as ``<address>``)."""
    kinds: dict[str, list] = collections.defaultdict(list)
    unread = 0
    for f in sorted(folder.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            for data in json.loads(line).get("observations", ()):
                for kind, cls in OBSERVATION_KINDS.items():
                    try:
                        from_data(cls, data)
                    except SpecError:
                        continue
                    kinds[kind].append((f.stem, data))
                    break
                else:
                    unread += 1
    return kinds, unread


def stratified(holding: list[tuple[int, Any]], n: int, rng) -> list[int]:
    """Up to ``n`` observations, drawn in turn from groups of those that exercise the same claims, so that
    the thousands of one-op runs of the sweeps do not crowd out the few runs that exercise a rare claim."""
    phases: dict[str, list[int]] = collections.defaultdict(list)
    for i, phase in holding:
        phases[phase].append(i)
    for ids in phases.values():
        rng.shuffle(ids)
    out, queues = [], [phases[p] for p in sorted(phases)]
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def judge_field(cls, kind: str, path: tuple, tp, sample: list, base: dict, crashes: dict, rng) -> dict:
    """Each observation of ``sample`` changed twice at ``path`` (every leaf; one leaf drawn at random) and
    judged by every claim; what changed, counted per observation."""
    counts = collections.Counter()
    for i, data in sample:
        n = sum(1 for _ in _leaves(data, path))
        seen = set()
        for one in (None, rng.randrange(n)):
            changed_data = perturb(data, path, tp, one)
            if changed_data is None:
                continue
            try:
                report = check(from_data(cls, changed_data))
            except SpecError:
                seen.add("refused")
                continue
            except Exception as e:   # the spec itself failed on a changed observation: a bug of the spec's, listed
                seen.add("crashed")
                crashes.setdefault(f"{type(e).__name__}: {e}"[:160], (kind, _name(path)))
                continue
            new = verdict(report)
            seen.add("violations" if new[0] != base[i][0] else "exercise" if new[1] != base[i][1] else "same")
        if seen:
            counts["tried"] += 1
            for what in ("refused", "crashed", "violations"):
                counts[what] += what in seen
            counts["exercise"] += seen <= {"exercise", "same"} and "exercise" in seen
    status = ("seen" if counts["violations"] or counts["refused"] or counts["crashed"] else
              "precondition" if counts["exercise"] else "unseen")
    return {"kind": kind, "field": _name(path), "status": status, **counts}


def _name(path: tuple) -> str:
    out = ""
    for seg in path:
        out += seg if seg in (ELEMENT, VALUE) else f"[{seg}]" if isinstance(seg, int) else ("." if out else "") + seg
    return out


def run(folder: Path, per_field: int, seed: int, kinds_wanted, crashes: dict, label: str | None = None) -> list[dict]:
    observations, unparsed = load_observations(folder)
    print(f"{sum(map(len, observations.values()))} observations in {label or folder} "
          f"({', '.join(f'{k} {len(v)}' for k, v in sorted(observations.items()))}; {unparsed} not readable)",
          flush=True)
    rng = random.Random(seed)
    rows = []
    for kind, cls in OBSERVATION_KINDS.items():
        if kinds_wanted and kind not in kinds_wanted or not observations.get(kind):
            continue
        datas = [d for _, d in observations[kind]]
        started = time.monotonic()
        base = {i: verdict(check(from_data(cls, d))) for i, d in enumerate(datas)}
        paths = list(field_paths(cls))
        for path, tp in paths:
            holding = [(i, base[i][1]) for i, d in enumerate(datas) if any(True for _ in _leaves(d, path))]
            picked = stratified(holding, per_field, rng)
            rows.append({**judge_field(cls, kind, path, tp, [(i, datas[i]) for i in picked], base, crashes, rng),
                         "holding": len(holding)})
        print(f"  {kind}: {len(paths)} fields judged in {time.monotonic() - started:.0f} s", flush=True)
    return rows


def report(rows: list[dict], per_field: int) -> None:
    print()
    print("| kind | field | observations holding it | tried | violations changed | exercise only | status |")
    print("|---|---|---|---|---|---|---|")
    order = {"unseen": 0, "precondition": 1, "seen": 2}
    for r in sorted(rows, key=lambda r: (r["kind"], order[r["status"]], r["field"])):
        if r["status"] == "seen" or not r.get("tried"):
            continue
        print(f"| {r['kind']} | `{r['field']}` | {r['holding']:,} | {r.get('tried', 0)} | {r.get('violations', 0)} | "
              f"{r.get('exercise', 0)} | {r['status']} |")
    print()
    tried = [r for r in rows if r.get("tried")]
    by = collections.Counter(r["status"] for r in tried)
    never = sum(1 for r in rows if not r.get("tried"))
    print(f"{len(tried)} fields held by verify's observations (up to {per_field} observations each): "
          f"{by['seen']} seen by a claim, {by['precondition']} only by a claim's precondition, {by['unseen']} unseen; "
          f"{never} more never held a value verify's runs produce (not listed)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artefacts", type=Path, help="a `zcspec verify --artefacts` folder (default: run verify into a temporary one)")
    ap.add_argument("--per-field", type=int, default=40, help="observations changed per field (default 40)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", action="append", choices=list(OBSERVATION_KINDS), help="only this kind (repeatable)")
    ap.add_argument("--json", type=Path, help="also write every field's row to this file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="zcspec-fields-") as tmp:
        folder = args.artefacts
        if folder is None:
            folder = Path(tmp) / "artefacts"
            print("running zcspec verify --quiet --artefacts ... (about 3 min)", flush=True)
            zcspec = shutil.which("zcspec")
            if zcspec is None:
                print("observation_fields.py: error: no zcspec command on PATH (pip install .)", file=sys.stderr)
                return 2
            done = subprocess.run([zcspec, "verify", "--quiet", "--artefacts", str(folder)],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
                print(f"zcspec verify exited with {done.returncode}: fields are judged on a passing run's "
                      "observations", file=sys.stderr)
                return 1
        elif not folder.is_dir():
            print(f"observation_fields.py: error: --artefacts {folder}: not a folder", file=sys.stderr)
            return 2
        crashes: dict = {}
        rows = run(folder, args.per_field, args.seed, args.kind, crashes,
                   None if args.artefacts else "verify's artefacts")
    report(rows, args.per_field)
    for message, (kind, field) in sorted(crashes.items()):
        print(f"the spec crashed on a {kind} with {field} changed: {message}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
