"""The mutation-score benchmark's parts: a seeded mutator, mutants that parse and differ, copies
that are really what runs (benchmarks/mutation_score.py; the campaign itself is the benchmark)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.mutation import mutator, runs
from benchmarks.mutation.attribution import Kill
from benchmarks.mutation.runs import Run, run
from benchmarks.mutation.score import Outcome, Score, wilson

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def impl_sites():
    return mutator.sites(REPO)


def test_the_sample_is_fixed_by_the_seed(impl_sites):
    assert mutator.sites(REPO) == impl_sites
    first = mutator.sample(impl_sites, 40, 7, REPO)
    assert mutator.sample(impl_sites, 40, 7, REPO) == first
    assert mutator.sample(impl_sites, 40, 8, REPO) != first
    assert len(set(first)) == 40


def _non_ascii(m: mutator.Mutation) -> bool:
    return not (REPO / m.path).read_text(encoding="utf-8").isascii()


def test_every_sampled_mutant_parses_and_differs_from_the_original(impl_sites):
    # Besides a sample, every site of the modules with non-ASCII text: there a byte column (ast's)
    # and a character column differ, and a splice at the wrong one would still parse.
    unicode = [m for m in impl_sites if _non_ascii(m)]
    assert unicode, "no module of impl/ has non-ASCII text any more: pick another way to test columns"
    for m in mutator.sample(impl_sites, 200, 0, REPO) + unicode:
        assert m.path.startswith("impl/") and not m.path.endswith("/errors.py"), m.label
        source = (REPO / m.path).read_text(encoding="utf-8")
        mutated = ast.parse(m.apply(source))
        assert ast.dump(mutated) != ast.dump(ast.parse(source)), m.describe()
        assert ast.dump(mutated) == ast.dump(_expected(source, m)), m.describe()


def _expected(source: str, m: mutator.Mutation) -> ast.Module:
    """The original tree with the one node the mutation names (found here from its line, its text
    and its character column) replaced by the parsed replacement: the splice changed nothing else."""
    tree = ast.parse(source)
    line = source.splitlines()[m.line - 1]
    column = len(source.encode("utf-8")[:m.start].decode("utf-8")) - len("".join(source.splitlines(True)[:m.line - 1]))
    targets = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == m.line
               and len(line.encode("utf-8")[:n.col_offset].decode("utf-8")) == column
               and ast.get_source_segment(source, n) == m.before]
    statement = m.operator in ("drop", "return")  # an Expr statement and its call share start and text
    targets = [n for n in targets if isinstance(n, ast.stmt) == statement]
    assert targets, f"{m.label}: no node with the text {m.before!r} at column {column}"
    target = targets[-1]  # the innermost, where nodes share a start and a text
    new = ast.parse(m.after).body[0] if statement else ast.parse(m.after, mode="eval").body

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            return new if node is target else super().visit(node)

    return Swap().visit(tree)


def test_every_operator_is_sampled(impl_sites):
    assert {m.operator for m in impl_sites} == {"compare", "boolop", "arith", "call", "off-by-one", "constant",
                                                "negate", "drop", "return", "table-drop", "table-value"}


def test_the_op_soc_and_dtype_tables_are_sites(impl_sites):
    tables = {(m.path, m.operator) for m in impl_sites if m.operator.startswith("table")}
    for path in ("impl/compiler/ops.py", "impl/platform/soc.py", "impl/platform/dtypes.py"):
        assert {(path, "table-drop"), (path, "table-value")} <= tables, path
    reduce_sum = [m for m in impl_sites if m.path == "impl/compiler/ops.py" and m.operator == "table-drop"
                  and m.detail.startswith('drop OpInfo("ReduceSum"')]
    assert reduce_sum, "dropping ReduceSum's op facts is not a site"
    atomic = [m for m in impl_sites if m.path == "impl/compiler/ops.py" and m.detail.startswith("drop atomic=True")]
    assert atomic and all("atomic=True" not in m.after for m in atomic)


LEFT_ALONE = '''\
"""Module docstring with 1 < 2."""
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from x import y
log = logging.getLogger(__name__)
TABLE = {"a": 1, "b": 2}
OPS = make(Info("Conv", inputs=(2, 3)))
ALIGN = 32


class Thing:
    """Docstring."""

    def __repr__(self):
        return f"Thing({1 + 1})"


def checked(n: "int" = 3) -> bool:
    """A check."""
    log.debug("n=%d", n + 1)
    print(n - 1)
    if n > 4:
        raise fail(f"n={n + 1} is over {4}", n + 1)
    err = PlanError("n", n + 1)
    return n > 4
'''


def test_docstrings_messages_and_logging_are_left_alone_tables_are_mutated():
    found = mutator.file_sites(LEFT_ALONE, "impl/x.py")
    assert {(m.line, m.operator, m.before, m.after) for m in found} == {
        (8, "table-drop", '{"a": 1, "b": 2}', '({"a": 1})'), (8, "table-drop", '{"a": 1, "b": 2}', '({"b": 2})'),
        (8, "table-value", "1", "(0)"), (8, "table-value", "1", "(2)"),
        (8, "table-value", "2", "(1)"), (8, "table-value", "2", "(3)"),
        (9, "table-drop", 'Info("Conv", inputs=(2, 3))', '(Info("Conv"))'),
        (9, "table-drop", "(2, 3)", "((2,))"), (9, "table-drop", "(2, 3)", "((3,))"),
        (9, "table-value", "2", "(1)"), (9, "table-value", "2", "(3)"),
        (9, "table-value", "3", "(2)"), (9, "table-value", "3", "(4)"),
        (10, "off-by-one", "32", "(33)"), (10, "off-by-one", "32", "(31)"),
        (20, "off-by-one", "3", "(4)"), (20, "off-by-one", "3", "(2)"),
        (24, "negate", "n > 4", "(not (n > 4))"), (24, "compare", "n > 4", "(n >= 4)"),
        (24, "off-by-one", "4", "(5)"), (24, "off-by-one", "4", "(3)"),
        (25, "drop", 'raise fail(f"n={n + 1} is over {4}", n + 1)', "pass"),
        (27, "return", "return n > 4", "return None"),
        (27, "compare", "n > 4", "(n >= 4)"), (27, "off-by-one", "4", "(5)"), (27, "off-by-one", "4", "(3)"),
    }


TABLES = '''\
__all__ = ["f", "g"]
FACTS = {
    "Conv": Info(inputs=(2, 3)),   # two or three
    "ReduceSum": Info(atomic=True),
}
ONE = {"only"}
OPS = make(
    Info("Add"),
    *(Info(op) for op in ("Relu", "Tanh")),
)
AFTER = 1
'''


def test_a_table_entry_is_dropped_keeping_every_line_number():
    found = mutator.file_sites(TABLES, "impl/x.py")
    assert not [m for m in found if m.line == 1], "__all__ is not a table"
    assert not [m for m in found if m.line == 6 and m.operator == "table-drop"], "a set cannot become {}"
    for m in (m for m in found if m.operator == "table-drop"):
        mutated = m.apply(TABLES)
        assert mutated.splitlines()[-1] == "AFTER = 1" and len(mutated.splitlines()) == len(TABLES.splitlines())
        assert ast.dump(ast.parse(mutated)) == ast.dump(_expected(TABLES, m)), m.describe()
    details = {m.detail for m in found if m.operator == "table-drop"}
    assert {'drop "Conv": Info(inputs=(2, 3)) of { "Conv": Info(inputs=(2, 3)), # two ...',
            "drop atomic=True of Info(atomic=True)", 'drop Info("Add") of make( Info("Add"), *(Info(op) for op ...',
            'drop "Tanh" of ("Relu", "Tanh")'} <= details, details
    conv = next(m for m in found if m.detail.startswith('drop "Conv"'))
    assert "ReduceSum" in conv.apply(TABLES).splitlines()[3] and "Conv" not in conv.apply(TABLES)


def test_an_early_return_is_dropped_a_final_one_only_emptied():
    found = mutator.file_sites("def f(a):\n    if a:\n        return 1\n    return 2\n", "impl/x.py")
    returns = {(m.line, m.after) for m in found if m.operator == "return"}
    assert returns == {(3, "return None"), (3, "pass"), (4, "return None")}


def test_a_mutation_refuses_a_source_it_was_not_found_in():
    m = mutator.file_sites("def f(a):\n    return a < 1\n", "impl/x.py")[0]
    with pytest.raises(ValueError, match="source changed"):
        m.apply("def f(a):\n    return a <= 1\n")


@pytest.mark.parametrize("code, kind, reason", [
    ("print('VIOLATION MEM-NO-OVERLAP in zoo:x'); raise SystemExit(1)", "violation", "MEM-NO-OVERLAP"),
    ("raise RuntimeError('boom')", "crash", "RuntimeError: boom"),
    ("raise RuntimeError('boom (\\n  in two lines\\n)')", "crash", "RuntimeError: boom ("),
    ("print('CRASH in zoo:x [plan, ge]: KeyError'); print('VIOLATION MEM-A in zoo:y'); raise SystemExit(1)",
     "violation", "MEM-A"),
    ("print('CRASH in zoo:x [plan, ge]: KeyError'); raise SystemExit(1)", "crash", "CRASH in zoo:x [plan, ge]: KeyError"),
    ("raise SystemExit(2)", "bad-input", ""),
    ("import sys; print('Z3 proofs (...): 1/2 proved'); print('  packing [1@0-1/8]: refuted suboptimal  arena 9'); "
     "print('W:onnxruntime warning', file=sys.stderr); raise SystemExit(1)",
     "violation", "packing [1@0-1/8]: refuted suboptimal  arena 9"),
    # numba-compiled code runs without bounds checks: a mutant can segfault, leaving no report behind
    ("import os, signal, sys; print('W:onnxruntime warning', file=sys.stderr, flush=True); "
     "os.kill(os.getpid(), signal.SIGSEGV)", "crash", "killed by SIGSEGV"),
    ("pass", "", ""),
])
def test_verify_verdicts(tmp_path, code, kind, reason):
    r = run("verify", [sys.executable, "-c", code], tmp_path, {}, timeout=30)
    assert (r.kind, r.reason) == (kind, reason)
    assert r.killed == bool(kind)


@pytest.mark.parametrize("code, kind, reason", [
    # pytest -x -n 2 exits 2 after a failed test, as after a collection error: the output tells them apart.
    ("print('FAILED tests/a.py::test_b - assert 0'); raise SystemExit(2)", "violation", "tests/a.py::test_b"),
    ("print('ERROR tests/a.py - ImportError'); raise SystemExit(2)", "crash", "tests/a.py"),
    ("print('FAILED tests/a.py::test_c'); raise SystemExit(1)", "violation", "tests/a.py::test_c"),
])
def test_suite_verdicts(tmp_path, code, kind, reason):
    r = run("suite", [sys.executable, "-c", code], tmp_path, {}, timeout=30)
    assert (r.verdict, r.kind, r.reason) == ("killed", kind, reason)


def _judged(judge, killed, kind="violation"):
    return Run(judge, "killed" if killed else "survived", kind if killed else "", int(killed), 1.0, "", "")


def _outcome(kill: Kill | None, artefacts: str | None = "", suite_kills: bool | None = None,
             path: str = "impl/x.py") -> Outcome:
    m = mutator.file_sites("def f(a):\n    return a < 1\n", path)[0]
    return Outcome(m, _judged("verify", kill is not None), kill or Kill(""), None if kill else artefacts,
                   None if suite_kills is None else _judged("suite", suite_kills))


def test_the_score_counts_kills_by_how_and_equivalents_only_with_identical_artefacts():
    claims, oracle = Kill("claims", claims=("MEM-NO-OVERLAP",)), Kill("oracle", oracle=("EXEC-ORACLE",))
    crash = Kill("crash", claims=("V1-SLOT-REFRESH",), crashed=True)
    outcomes = [_outcome(claims), _outcome(oracle), _outcome(oracle, path="impl/device/kernels/x.py"), _outcome(crash),
                _outcome(Kill("floor", floor=("V1-HCCL-COPY",))),
                _outcome(None, "zoo.jsonl differ; first: zoo case 'x'", suite_kills=False),  # a miss all the same
                _outcome(None, "", suite_kills=True),                                       # identical, suite kills
                _outcome(None, "", suite_kills=False), _outcome(None, "")]                  # equivalent
    score = Score.of(outcomes)
    assert (len(score.killed), len(score.missed), len(score.equivalent)) == (5, 2, 2)
    assert [o.status for o in outcomes[5:7]] == ["missed", "missed"]
    assert (score.overall.k, score.overall.n) == (5, 7)
    assert len(score.silent) == 6 and (score.silent_claims.k, score.silent_claims.n) == (3, 6)
    assert (score.claims_alone.k, score.claims_alone.n) == (4, 7)
    assert (score.claims_outside_kernels.k, score.claims_outside_kernels.n) == (1, 5)
    lines = score.lines()
    assert lines[0] == "verify kills 5 of 7 non-equivalent mutants = 71.4% (95% interval 35.9-91.8%)"
    assert lines[1].startswith("  the claims (the oracle too) kill 3 of 6 silent mutants = 50.0% (95% interval")
    assert "how verify killed: timeout 0, crash 1, refusal 0, claims 1, oracle only 2, other checks 0, " \
           "exercise floor 1" in lines
    assert "verify's misses: 2 (artefacts differ 1, identical artefacts but the suite kills 1)" in lines
    assert Score.of([_outcome(None, "")]).percent is None


def test_wilson_intervals():
    assert wilson(0, 0) == (0.0, 100.0)
    lo, hi = wilson(18, 25)
    assert (round(lo, 1), round(hi, 1)) == (52.4, 85.7)
    lo, hi = wilson(40, 40)
    assert hi == 100.0 and round(lo, 1) == 91.2


def _verdict(**over) -> dict:
    base = {"ok": False, "stopped": "", "claims": {}, "findings": [], "counterexample": None, "error_kinds": {},
            "errors": [], "failed_calls": [], "failed_call_count": 0, "proofs_failed": [], "corpus_regressed": [],
            "below_floor": [], "never_exercised": []}
    return {**base, **over}


@pytest.mark.parametrize("verdict, how, claims, oracle, silent", [
    (_verdict(claims={"EXEC-ORACLE": 3}), "oracle", (), ("EXEC-ORACLE",), True),
    (_verdict(claims={"EXEC-ORACLE": 3, "MEM-NO-OVERLAP": 1}, counterexample="V1-SLOT-REFRESH"), "claims",
     ("MEM-NO-OVERLAP", "V1-SLOT-REFRESH"), ("EXEC-ORACLE",), True),
    (_verdict(claims={"MEM-NO-OVERLAP": 1}, error_kinds={"crash": 1},
              errors=[{"case": "zoo:x", "kind": "crash", "message": "KeyError: 'a'"}]),
     "crash", ("MEM-NO-OVERLAP",), (), False),
    (_verdict(failed_call_count=1, failed_calls=[{"run": "v1", "reason": "refused"}]), "refusal", (), (), False),
    (_verdict(error_kinds={"check": 1}, errors=[{"case": "ACL refusal x", "kind": "check", "message": "not refused"}]),
     "check", (), (), True),
    (_verdict(proofs_failed=[{"case": "zoo:x", "status": "refuted", "kind": "overlap"}]), "claims",
     ("PROOF-OVERLAP",), (), True),
    (_verdict(corpus_regressed=[{"claim": "MEM-A", "error": "KeyError", "violations": []}]), "crash", (), (), False),
    (_verdict(below_floor=["V1-HCCL-COPY"]), "floor", (), (), True),
])
def test_a_kill_is_attributed_from_the_verdict(verdict, how, claims, oracle, silent):
    kill = Kill.of(_judged("verify", True), verdict)
    assert (kill.how, kill.claims, kill.oracle, kill.silent) == (how, claims, oracle, silent)


@pytest.mark.parametrize("kind, how", [("timeout", "timeout"), ("crash", "crash"), ("bad-input", "refusal")])
def test_a_run_without_a_verdict_is_attributed_from_its_exit(kind, how):
    kill = Kill.of(_judged("verify", True, kind), None)
    assert kill.how == how and not kill.silent
    assert Kill.of(_judged("verify", False), None).how == ""


def test_the_script_lists_a_seeded_sample_without_running_anything():
    cmd = [sys.executable, str(REPO / "benchmarks" / "mutation_score.py"), "--list", "--sample", "3", "--seed", "5",
           "--worktree"]
    first, again = (subprocess.run(cmd, capture_output=True, text=True, timeout=120) for _ in range(2))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("mutation score: 3 mutants sampled (seed 5) from ") and len(lines) == 5
    assert lines[1] == "(a sample under 40, of some modules or with other verify arguments: not issue 35's figure)"
    assert again.stdout == first.stdout
    drawn = subprocess.run(cmd[:2] + ["--list", "--sample", "2", "--worktree"], capture_output=True, text=True,
                           timeout=120)
    seed = drawn.stdout.split("(seed ")[1].split(",")[0]
    assert "drawn" in drawn.stdout.splitlines()[0]
    assert drawn.stdout.splitlines()[1] == f"the same sample: python benchmarks/mutation_score.py --sample 2 " \
                                           f"--worktree --seed {seed}"
    figure = subprocess.run(cmd[:2] + ["--list", "--worktree"], capture_output=True, text=True, timeout=120)
    assert "40 mutants sampled" in figure.stdout and "not issue 35's figure" not in figure.stdout


def test_module_patterns_restrict_the_sites_and_a_pattern_matching_nothing_is_refused(impl_sites):
    acl = mutator.in_modules(impl_sites, ["impl/runtime/acl.py"])
    assert acl and {m.path for m in acl} == {"impl/runtime/acl.py"}
    packing = mutator.in_modules(impl_sites, ["impl/compiler/memory/packing/*", "impl/runtime/acl.py"])
    assert {m.path for m in packing} > {"impl/runtime/acl.py"} and set(acl) < set(packing)
    assert mutator.in_modules(impl_sites, []) == impl_sites
    with pytest.raises(ValueError, match="--module 'impl/nowhere.py' matches none"):
        mutator.in_modules(impl_sites, ["impl/nowhere.py"])


def test_the_script_lists_a_focused_sample_and_refuses_an_unknown_module():
    cmd = [sys.executable, str(REPO / "benchmarks" / "mutation_score.py"), "--list", "--sample", "4", "--seed", "0",
           "--worktree"]
    focused = subprocess.run(cmd + ["--module", "impl/runtime/acl.py"], capture_output=True, text=True, timeout=120)
    assert focused.returncode == 0, focused.stderr
    lines = focused.stdout.splitlines()
    assert "in 1 modules of impl/" in lines[0] and "(--module impl/runtime/acl.py)" in lines[0]
    assert len(lines) == 6 and all(line.split()[0].startswith("impl/runtime/acl.py:") for line in lines[2:])
    bad = subprocess.run(cmd + ["--module", "impl/nowhere.py"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "matches none" in bad.stderr


def test_a_judges_tail_keeps_what_stdout_says_failed_under_a_flood_of_warnings():
    """pytest prints its plugins' warnings on stderr last: the baseline's error must still show the failure."""
    out = "\n".join(["." * 70] * 3 + ["FAILED tests/x.py::test_y - AssertionError", "1 failed in 3.0s"])
    err = "\n".join(["PytestBenchmarkWarning: Benchmarks are automatically disabled"] * 200)
    tail = runs._tail(out, err)
    assert "FAILED tests/x.py::test_y" in tail and tail.count("PytestBenchmarkWarning") == runs.ERR_LINES


def test_a_ge_case_kill_counts_for_the_decisions_line_not_for_the_claims():
    label = ("hybrid_mem_assigner_unittest.cc TEST_F ProcessInplace_two_nodes_continous_output "
             "(checks/cases/ge/hybrid_mem_assigner.py::ProcessInplace_two_nodes_continous_output)")
    verdict = _verdict(error_kinds={"check": 1}, errors=[{"case": label, "kind": "check", "message": "GE expects 1"}])
    ge = Kill.of(_judged("verify", True), verdict)
    assert (ge.how, ge.checks, ge.silent, ge.by_claims, ge.by_decisions) == ("check", ("ge-case",), True, False, True)
    acl = Kill.of(_judged("verify", True), _verdict(error_kinds={"check": 1}, errors=[
        {"case": "ACL refusal x", "kind": "check", "message": "not refused"}]))
    assert acl.checks == ("acl-refusal",) and not acl.by_decisions
    score = Score.of([_outcome(ge), _outcome(acl), _outcome(Kill("claims", claims=("MEM-NO-OVERLAP",)))])
    assert (score.silent_claims.k, score.silent_decisions.k, score.silent_decisions.n) == (1, 2, 3)
    assert score.lines()[2].startswith("  the claims and GE's own unit-test cases kill 2 of 3 silent mutants")
