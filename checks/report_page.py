"""The report page of a run: ``RunReport``, a frozen artefact built from a run's result, and its HTML.

A builder per command turns what the run returned into a ``RunReport``:
``verify_report`` (a ``checks.verify_result.VerifyResult``), ``exhaustive_report`` (an
exhaustive run's tally and ``checks.exhaustive.Failure`` list) and
``explore_report`` (explore's tally, counterexamples and crashed campaigns).
``render_html(report)`` (checks/report_html.py) returns one self-contained page (inline CSS and SVG, no
script, no external URL) with a section per part, each with a stable id
(``SECTIONS``): the verdict, the per-claim coverage, each violated claim with
its smallest failing graph drawn (checks/graph_picture.py), the plan rows it
names and, for a claim on the memory plan, the plan's layout picture
(spec/picture.py), the crashes, the Z3 results, the corpus and the timings.
Every string from the run is escaped. ``write_report(report, path)`` writes it;
``check_writable(path)`` refuses a path it could not write, before a long run.

Drawing observes, it does not judge: a plan-kind violation's graph is compiled
again the way its scenario says and observed (``checks.scenario.observe``, as
the run did); nothing here asks the implementation whether anything is valid.
"""
from __future__ import annotations

import os
from collections import Counter

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.report_html import render_html
from zcspec.checks.scenario import observe
from zcspec.checks.verify_result import MIN_DISTINCT, violation_rows
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler.ir import Graph
from zcspec.spec.picture import plan_svg
from zcspec.spec.registry import all_invariants

MODES = ("verify", "explore", "exhaustive")
SECTIONS = ("summary", "coverage", "violations", "crashes", "proofs", "corpus", "timings")
MAX_DRAWN_NODES = 120   # a bigger graph is named, not drawn (its picture would not fit a page)
MAX_OTHERS = 50         # the other failing cases listed under a violated claim


@attrs.frozen
class CoverageRow:
    """One claim's counts; ``state`` as the text report's table says it (``coverage_rows``)."""

    claim: str
    applied: int
    exercised: int
    distinct: int
    violated: int
    state: str


@attrs.frozen
class ViolationEntry:
    """A violated claim: the failing case drawn (its graph, the plan rows named, the layout picture's SVG)
    and ``count`` failing cases in all (``others``: the rest, one line each). ``note`` says why the graph
    or the picture is left out, when one is."""

    claim: str
    case: str
    culprit: str
    message: str
    values: dict = attrs.field(factory=dict)
    graph: Graph | None = None
    plan_rows: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    picture: str | None = None
    note: str = ""
    count: int = 1
    others: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class ProofRow:
    case: str
    status: str
    kind: str
    reason: str


@attrs.frozen
class CorpusEntry:
    summary: str
    ok: bool


@attrs.frozen
class RunReport:
    """Everything the page shows. ``crashes`` are (case, message), ``timings`` (phase, seconds)."""

    title: str
    mode: str = attrs.field(validator=attrs.validators.in_(MODES))
    summary: str
    ok: bool
    coverage: tuple[CoverageRow, ...] = attrs.field(default=(), converter=tuple)
    violations: tuple[ViolationEntry, ...] = attrs.field(default=(), converter=tuple)
    proofs: tuple[ProofRow, ...] = attrs.field(default=(), converter=tuple)
    corpus: tuple[CorpusEntry, ...] = attrs.field(default=(), converter=tuple)
    crashes: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=tuple)
    timings: tuple[tuple[str, float], ...] = attrs.field(default=(), converter=tuple)
    notes: tuple[str, ...] = attrs.field(default=(), converter=tuple)


def coverage_rows(tally, findings, invariants) -> tuple[CoverageRow, ...]:
    """Per claim of ``invariants``: applied, exercised, distinct and violated counts of ``tally`` (a
    ``checks.campaign.Tally``), violations counted from ``findings`` (verify's) when there are any, and the
    state: VIOLATED, NEVER EXERCISED, BELOW FLOOR (MIN_DISTINCT) or ok. The text table prints these rows."""
    viol = Counter(f.violation.invariant_id for f in findings)
    rows = []
    for i in (inv.id for inv in invariants):
        bad = viol[i] or tally.violated[i]
        distinct = tally.distinct_count(i)
        state = ("VIOLATED" if bad else "NEVER EXERCISED" if not tally.exercised[i]
                 else f"BELOW FLOOR ({MIN_DISTINCT})" if distinct < MIN_DISTINCT else "ok")
        rows.append(CoverageRow(i, tally.applied[i], tally.exercised[i], distinct, bad, state))
    return tuple(rows)


def smallest_failures(failures) -> dict:
    """Per violated invariant (a crash: by exception type), its ``Failure`` on the fewest nodes (the first
    such in enumeration order): the one a report draws."""
    best: dict = {}
    for f in failures:
        key = f.invariant or f.message.split(":")[0]
        if key not in best or len(f.scenario.graph.nodes) < len(best[key].scenario.graph.nodes):
            best[key] = f
    return best


@attrs.frozen
class _Named:
    """What ``checks.verify_result.violation_rows`` reads of a violation: the culprit and the values."""

    culprit: str
    values: dict


def _entry(claim: str, case: str, scenario, culprit: str, message: str, values: dict, *, rows=None,
           count: int = 1, others=()) -> ViolationEntry:
    """The entry of one failing case; its graph drawn unless too big, its plan drawn when the claim judges
    the plan (compiled and observed again as the scenario says). ``rows``: the plan rows the run kept."""
    graph, notes = scenario.graph, []
    if len(graph.nodes) > MAX_DRAWN_NODES:
        notes.append(f"graph not drawn: {len(graph.nodes)} nodes (at most {MAX_DRAWN_NODES} are drawn)")
        graph = None
    picture = None
    if scenario.kind != "plan":
        notes.append(f"no layout picture: the claim judges the {scenario.kind.replace('_', ' ')}, not the memory plan")
    else:
        try:
            plan = observe(scenario)[0]
        except Exception as e:  # the run compiled it; if compiling again fails, the page says so
            notes.append(f"no layout picture: compiling the graph again raised {type(e).__name__}: {e}")
        else:
            picture = plan_svg(plan, title=f"memory plan of {scenario.graph.name} ({scenario.compile.strategy})")
            rows = rows if rows is not None else violation_rows(plan, _Named(culprit, values))
    return ViolationEntry(claim, case, culprit, message, {str(k): v for k, v in values.items()}, graph,
                          [_plan_row(t) for t in rows or ()], picture, "; ".join(notes), count, others[:MAX_OTHERS])


def _plan_row(t) -> str:
    """A PlacedTensor as one line: where it lives and when."""
    return (f"{t.name}: {t.region}+{t.offset}, {t.size} bytes (aligned {t.aligned_size}), steps {t.first}..{t.last}, "
            f"block {t.block}" + (f", alias of {t.alias_of}" if t.alias_of else ""))


def _tally_proofs(tally) -> list[ProofRow]:
    """A random campaign's proofs: one row per (claim, status) with its count, one per unknown with Z3's reason."""
    rows = [ProofRow(f"random cases: {n}", status, claim, "") for (claim, status), n in sorted(tally.proofs.items())]
    rows += [ProofRow(f"random case {case[:12]}", "unknown", claim, reason) for case, claim, reason in tally.unknown]
    return rows


def _verify_scenarios(config, cases: set) -> dict:
    """The Scenario of each case label in ``cases`` that is a zoo case of ``config`` (rebuilt as verify built it)."""
    found: dict = {}
    if config is None or not cases:
        return found
    for label, scenario in zoo_cases(config):
        if label in cases:
            found[label] = scenario
            if len(found) == len(cases):
                break
    return found


def _verify_violations(result, config) -> list[ViolationEntry]:
    scenarios = _verify_scenarios(config, {f.case for f in result.findings})
    by_claim: dict = {}
    for f in result.findings:
        by_claim.setdefault(f.violation.invariant_id, []).append(f)
    entries = []
    for claim, fs in by_claim.items():
        best = min(fs, key=lambda f: len(scenarios[f.case].graph.nodes) if f.case in scenarios else float("inf"))
        v = best.violation
        others = [f"{f.case}: {f.violation.culprit}: {f.violation.message}" for f in fs if f is not best]
        if best.case in scenarios:
            entries.append(_entry(claim, best.case, scenarios[best.case], v.culprit, v.message, v.values,
                                  rows=best.rows, count=len(fs), others=others))
            continue
        why = "no configuration given" if config is None else f"{best.case!r} is not one of the zoo's cases"
        entries.append(ViolationEntry(claim, best.case, v.culprit, v.message, {str(k): x for k, x in v.values.items()},
                                      None, [_plan_row(t) for t in best.rows], None,
                                      f"graph not drawn: {why}", len(fs), others[:MAX_OTHERS]))
    if (cx := result.counterexample) is not None:
        entries.append(_counterexample_entry(cx, "the random campaign's shrunk counterexample"))
    return entries


def _counterexample_entry(cx, case: str) -> ViolationEntry:
    v = cx.violation
    return _entry(cx.invariant, case, cx.scenario, str(v.get("culprit", "")), str(v.get("message", "")),
                  dict(v.get("values") or {}))


def _verify_notes(result, ids) -> list[str]:
    notes = [result.stopped] if result.stopped else []
    if (nodes := result.node_tests) is not None:
        notes.append(f"ONNX node tests: {nodes.run} run, {len(nodes.refused)} refused (unsupported), "
                     f"{len(nodes.failed)} failed, {len(nodes.known)} known failures not run")
    for what, (run, failed) in (("packing cases", result.packing_cases), ("ACL refusals", result.acl_refusals)):
        if run:
            notes.append(f"{what}: {run} run, {failed} failed")
    if result.foreign:
        wrong = sum(1 for _, _, w in result.foreign if w)
        notes.append(f"other compilers' plans: {len(result.foreign)} programs, {wrong} not as expected")
    notes.append(f"oracle: {result.tally.judged} outputs judged, {len(result.unjudged)} left unjudged")
    notes += [f"FAILED CALL on valid buffers, {n.run}: {n.reason}" for n in result.failed_calls]
    if thin := result.below_floor(ids):
        notes.append(f"exercised by fewer than {MIN_DISTINCT} distinct cases: {', '.join(thin)}")
    return notes


def verify_report(result, invariants, *, config=None, ok: bool | None = None, summary: str | None = None,
                  title: str = "zcspec verify") -> RunReport:
    """The report of a ``zcspec verify`` run.

    ``result``: the ``VerifyResult``; ``invariants``: the claims of the coverage table (the run's,
    ``spec.registry.all_invariants()``). ``config``: the run's ``VerifyConfig``; with it each violated
    claim's zoo case on the fewest nodes is rebuilt to draw its graph and plan (without it, the plan
    rows only). The campaign's shrunk counterexample is drawn as well. ``ok`` and ``summary``: the
    verdict and the closing line the caller printed (default: ``result.ok`` over every claim, counts)."""
    ids = [i.id for i in invariants]
    ok = result.ok(ids) if ok is None else ok
    if summary is None:
        summary = (f"{result.tally.cases} cases in {result.seconds:.1f} s: "
                   + ("all invariants held" if ok else f"FAILED ({len(result.findings)} violations, "
                                                       f"{len(result.errors)} crashes)"))
    proofs = [ProofRow(case, p.status, p.kind or "", p.reason) for case, p in result.proofs]
    return RunReport(title, "verify", summary, ok, coverage_rows(result.tally, result.findings, invariants),
                     _verify_violations(result, config), proofs + _tally_proofs(result.tally),
                     [CorpusEntry(r.summary(), r.as_expected) for r in result.corpus], list(result.errors),
                     list(result.timings) + [("total", result.seconds)], _verify_notes(result, ids))


def exhaustive_report(tally, failures, invariants, graphs: int, seconds: float, *,
                      title: str = "zcspec exhaustive") -> RunReport:
    """The report of a ``zcspec exhaustive`` run: ``tally`` and ``failures`` (``checks.exhaustive.Failure``,
    violations and crashes) of the run, ``invariants`` of the coverage table (those of the kinds
    checked), the ``graphs`` enumerated and the run's ``seconds``. Per violated claim, only its failure
    on the fewest nodes is drawn (``smallest_failures``); the others are counted."""
    failures = list(failures)
    keys = Counter(f.invariant or f.message.split(":")[0] for f in failures)
    entries, crashes = [], []
    for key, f in sorted(smallest_failures(failures).items()):
        case = f"{f.scenario.graph.name} [{f.scenario.kind}, {f.scenario.compile.strategy}]"
        if f.invariant is None:
            crashes.append((f"{case} (smallest of {keys[key]} crashes)", f.message))
        else:
            entries.append(_entry(f.invariant, case, f.scenario, f.culprit, f.message, f.values, count=keys[key]))
    crashed = sum(1 for f in failures if f.invariant is None)
    summary = (f"{graphs} graphs, {tally.cases} observations checked in {seconds:.1f} s: "
               + (f"FAILED ({len(failures) - crashed} violations, {crashed} crashes)" if failures
                  else "every invariant held"))
    return RunReport(title, "exhaustive", summary, not failures, coverage_rows(tally, (), invariants), entries,
                     _tally_proofs(tally), (), crashes, [("enumerating and checking every graph", seconds)])


def explore_report(tally, counterexamples, crashes, seconds: float, *, invariants=None, names=None,
                   title: str = "zcspec explore") -> RunReport:
    """The report of a ``zcspec explore`` run: its ``tally``, the shrunk ``counterexamples``
    (``checks.counterexample.Counterexample``, each drawn; ``names``, e.g. the files they were saved to,
    label them), the ``crashes`` (explore's ``"seed N: error"`` strings) and the run's ``seconds``.
    ``invariants``: the claims of the coverage table (default: every claim)."""
    counterexamples = list(counterexamples)
    names = list(names) if names is not None else [f"counterexample {k + 1}" for k in range(len(counterexamples))]
    entries = [_counterexample_entry(cx, name) for cx, name in zip(counterexamples, names)]
    ok = not counterexamples and not crashes
    summary = (f"{tally.cases} cases in {seconds:.1f} s, {len(counterexamples)} counterexamples, "
               f"{len(crashes)} crashed campaigns" + ("" if ok else ": FAILED"))
    return RunReport(title, "explore", summary, ok,
                     coverage_rows(tally, (), all_invariants() if invariants is None else invariants), entries,
                     _tally_proofs(tally), (), [("campaign", c) for c in crashes],
                     [("random campaigns", seconds)])


def write_report(report: RunReport, path: str) -> str:
    """Write ``render_html(report)`` to ``path`` and return ``path``; UsageError naming the file if it
    cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_html(report))
    except OSError as e:
        raise UsageError(f"cannot write the report page: {e.strerror or e}", file=path) from e
    return path


def check_writable(path: str) -> None:
    """UsageError naming ``path`` unless a report page can be written there (checked before a long run)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError("is a folder; name the report page's file, e.g. report.html", file=path)
    if not os.path.isdir(folder):
        raise UsageError(f"cannot write the report page: folder {folder!r} does not exist", file=path)
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError("cannot write the report page: permission denied", file=path)
