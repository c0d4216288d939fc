"""The mutation benchmark's campaign judging end to end with a stand-in verify (attribution, artefact
comparison, the suite's turn, the baseline) and its journal (a stopped run resumes), in seconds."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.mutation import mutator
from benchmarks.mutation.sandbox import Sandbox


# A stand-in for ``zcspec verify --artefacts DIR`` run in a mutant's copy (its cwd): it reads the copy's
# impl/x.py and writes a case table, DIGESTS and a verdict as verify does, so that the campaign's judging
# (attribution, comparison, the suite's turn) runs end to end in seconds.
FAKE_VERIFY = r'''
import hashlib, json, pathlib, sys
out = pathlib.Path(sys.argv[sys.argv.index("--artefacts") + 1]); out.mkdir(parents=True)
source = pathlib.Path("impl/x.py").read_text()
if "a <= 1" in source:
    verdict = {"ok": False, "stopped": "", "claims": {"MEM-NO-OVERLAP": 1}, "findings": [], "counterexample": None,
               "error_kinds": {}, "errors": [], "failed_calls": [], "failed_call_count": 0, "proofs_failed": [],
               "corpus_regressed": [], "below_floor": [], "never_exercised": []}
    (out / "verdict.json").write_text(json.dumps(verdict)); print("VIOLATION MEM-NO-OVERLAP in zoo:x"); sys.exit(1)
built = "the plan" if '"a": 1' in source else "another plan"   # the table's entry b builds nothing
line = json.dumps({"case": "zoo:x", "built": built})
(out / "zoo.jsonl").write_text(line + "\n")
(out / "cases.tsv").write_text("phase\tcase\tobservations\tviolated\tsha256\nzoo\tzoo:x\t1\t\t"
                               + hashlib.sha256(line.encode()).hexdigest() + "\n")
(out / "DIGESTS").write_text("".join(f"{hashlib.sha256((out / n).read_bytes()).hexdigest()}  {n}\n"
                                     for n in ("cases.tsv", "zoo.jsonl")))
'''


SOURCE = 'TABLE = {"a": 1, "b": 2}\n\n\ndef f(a):\n    return a < 1\n'


def _fake_campaign(tmp_path, monkeypatch, verify_script: str) -> Sandbox:
    """A copy of a repository whose impl/ is one module (SOURCE), judged by ``verify_script`` and a suite
    that passes."""
    from benchmarks.mutation import campaign
    repo = tmp_path / "repo"
    for folder in ("api", "spec", "impl", "checks"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "__init__.py").write_text("")
    (repo / "impl" / "x.py").write_text(SOURCE)
    fake = tmp_path / "fake_verify.py"
    fake.write_text(verify_script)
    monkeypatch.setattr(campaign, "verify_command", lambda extra, artefacts=None: [
        sys.executable, str(fake), "--artefacts", str(artefacts)])
    monkeypatch.setattr(campaign, "suite_command", lambda workers, extra: [sys.executable, "-c", "pass"])
    return Sandbox.create(repo, tmp_path / "work" / "pristine", commit=None)


def test_the_campaign_attributes_kills_and_proves_equivalents_by_their_artefacts(tmp_path, monkeypatch):
    from benchmarks.mutation import campaign
    source = SOURCE
    pristine = _fake_campaign(tmp_path, monkeypatch, FAKE_VERIFY)
    settings = campaign.Settings(jobs=2)
    limits = campaign.baseline(pristine, tmp_path / "work", settings, lambda s: None)
    found = {(m.operator, m.after): m for m in mutator.file_sites(source, "impl/x.py")}
    chosen = [found[("compare", "(a <= 1)")], found[("table-drop", '({"a": 1})')], found[("table-drop", '({"b": 2})')]]
    outcomes = campaign.judge(chosen, pristine, tmp_path / "work", settings, limits, lambda s: None)
    by = {o.mutation.after: o for o in outcomes}
    killed, equivalent, missed = by["(a <= 1)"], by['({"a": 1})'], by['({"b": 2})']
    assert (killed.status, killed.kill.how, killed.kill.claims) == ("verify-killed", "claims", ("MEM-NO-OVERLAP",))
    assert (equivalent.status, equivalent.artefacts, equivalent.suite.verdict) == ("equivalent", "", "survived")
    assert missed.status == "missed" and missed.suite is None
    assert missed.artefacts == "cases.tsv, zoo.jsonl differ; first: zoo case 'zoo:x'"


def test_a_baseline_whose_two_runs_write_different_artefacts_is_refused(tmp_path, monkeypatch):
    from benchmarks.mutation import campaign
    noisy = FAKE_VERIFY.replace('built = "the plan"', 'import random; built = str(random.random()) or "the plan"')
    pristine = _fake_campaign(tmp_path, monkeypatch, noisy)
    with pytest.raises(campaign.CampaignError, match="two verify runs of the unmutated copy wrote different artefacts"):
        campaign.baseline(pristine, tmp_path / "work", campaign.Settings(), lambda s: None)


def _judged_with_journal(tmp_path, monkeypatch, journal_path, *, seed=7):
    """The fake campaign's three mutants judged with a journal at ``journal_path``: (outcomes, journal)."""
    from benchmarks.mutation import campaign
    from benchmarks.mutation.journal import Identity, Journal
    pristine = _fake_campaign(tmp_path, monkeypatch, FAKE_VERIFY)
    found = {(m.operator, m.after): m for m in mutator.file_sites(SOURCE, "impl/x.py")}
    chosen = [found[("compare", "(a <= 1)")], found[("table-drop", '({"a": 1})')], found[("table-drop", '({"b": 2})')]]
    journal = Journal.open(journal_path, Identity("c0ffee", seed, 3, (), (), (), "identical", 2, None, None))
    settings = campaign.Settings(jobs=2)
    pending = any(journal.verify(i, m) is None for i, m in enumerate(chosen))
    limits = campaign.baseline(pristine, tmp_path / "work", settings, lambda s: None, journal=journal,
                               artefacts=pending)
    return campaign.judge(chosen, pristine, tmp_path / "work", settings, limits, lambda s: None, journal), journal


def test_a_stopped_run_resumes_from_its_journal_without_judging_again(tmp_path, monkeypatch):
    """A figure run killed after hours left nothing; the journal keeps each verdict as it comes, and a run
    of the same identity reads them back instead of running a judge."""
    from benchmarks.mutation import campaign
    path = tmp_path / "out" / "run.journal.jsonl"
    first, _ = _judged_with_journal(tmp_path / "a", monkeypatch, path)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"kind": "suite", "index": 1, "muta')   # the line a kill cut short
    monkeypatch.setattr(campaign, "run", lambda *a, **k: pytest.fail("a judge ran although its verdict is recorded"))
    again, journal = _judged_with_journal(tmp_path / "b", monkeypatch, path)
    assert journal.resumed == 1 + 3 + 1   # the baseline, three verify runs, one suite run
    assert [o.to_json() for o in again] == [o.to_json() for o in first]


def test_a_journal_of_another_run_or_a_finished_one_starts_afresh(tmp_path, monkeypatch):
    from benchmarks.mutation.journal import Identity, Journal
    path = tmp_path / "run.journal.jsonl"
    _, journal = _judged_with_journal(tmp_path / "a", monkeypatch, path)
    assert Journal.open(path, Identity("c0ffee", 8, 3, (), (), (), "identical", 2, None, None)).resumed == 0
    _, journal = _judged_with_journal(tmp_path / "b", monkeypatch, path)
    journal.finish()
    assert Journal.open(path, Identity("c0ffee", 7, 3, (), (), (), "identical", 2, None, None)).resumed == 0


def test_a_journal_whose_mutants_are_not_the_samples_is_refused(tmp_path, monkeypatch):
    from benchmarks.mutation.journal import Identity, Journal
    path = tmp_path / "run.journal.jsonl"
    _judged_with_journal(tmp_path / "a", monkeypatch, path)
    journal = Journal.open(path, Identity("c0ffee", 7, 3, (), (), (), "identical", 2, None, None))
    found = {(m.operator, m.after): m for m in mutator.file_sites(SOURCE, "impl/x.py")}
    with pytest.raises(ValueError, match="the journal is not of this sample"):
        journal.verify(0, found[("table-drop", '({"b": 2})')])   # mutant 0 is the compare


def test_the_script_resumes_the_seed_of_an_unfinished_run_of_the_same_command(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import mutation_score
    out = tmp_path / "score.json"
    args = mutation_score._args(["--sample", "40", "--out", str(out)])
    mutation_score._journal(args, "c0ffee")
    drawn = args.seed
    again = mutation_score._args(["--sample", "40", "--out", str(out)])
    mutation_score._journal(again, "c0ffee")
    assert again.seed == drawn                       # unfinished, same command and commit: resumed
    other = mutation_score._args(["--sample", "40", "--out", str(out)])
    assert mutation_score._journal(other, "beef00").resumed == 0   # another commit: a new run, a new journal
    assert mutation_score.read_header(out.with_suffix(".journal.jsonl"))["run"]["commit"] == "beef00"
    fresh = mutation_score._args(["--sample", "40", "--out", str(out), "--seed", "5", "--fresh"])
    assert mutation_score._journal(fresh, "beef00").resumed == 0 and fresh.seed == 5
