"""verify's packing cases (checks/packing_cases.py, checks/packing_csv_cases.py): they pass on the real
packer, and each deliberately broken packer behaviour below makes some of them report a problem."""
from __future__ import annotations

import csv as csv_module
import inspect
import random
import textwrap

import attrs
import numpy as np
import pytest

from zcspec.checks import packing_cases as packing_cases_module
from zcspec.checks import packing_facts
from zcspec.checks import verify as verify_module
from zcspec.checks.packing_cases import check_packing_case, packing_cases
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.compiler.memory.packing import Buffer, greedy, minimalloc_csv, packer, search


@pytest.fixture(scope="module")
def cases():
    return packing_cases(0)


def problems_of(cases, *words) -> list[str]:
    """The problems of the cases whose label contains every one of ``words``."""
    chosen = [c for c in cases if all(w in c.label for w in words)]
    assert chosen, f"no case labelled with {words}"
    return [p for c in chosen for p in check_packing_case(c)]


def test_every_case_passes_on_the_real_packer(cases):
    labels = [c.label for c in cases]
    assert len(labels) == len(set(labels)), "labels name one case each"
    assert [p for c in cases for p in check_packing_case(c)] == []


def test_other_seeds_draw_other_small_instances_that_pass():
    small = [c for c in packing_cases(11) if c.label.startswith("small")]
    assert {c.pieces for c in small}.isdisjoint({c.pieces for c in packing_cases(0) if c.label.startswith("small")})
    assert [p for c in small for p in check_packing_case(c)] == []


def test_the_reference_greedy_is_the_packers_stage_1_on_random_instances():
    """The checker's greedy by size is written from the docs alone; on random instances it agrees
    with the packer's best fit and first fit (so a disagreement in verify is the packer's change)."""
    rng = random.Random(4)
    for _ in range(50):
        pieces = [packing_facts.Piece(f"b{i}", lo, lo + rng.randint(1, 5), rng.randint(1, 30), rng.choice((1, 2, 8)))
                  for i, lo in enumerate(rng.randrange(8) for _ in range(rng.randint(1, 12)))]
        inst = greedy.Instance.of([Buffer(*p) for p in pieces])
        for fit, first in (("best", False), ("first", True)):
            offsets = greedy.best_fit(inst, greedy.order_by_size(inst), first=first)
            assert packing_facts.greedy_by_size(pieces, fit=fit) == {p.id: int(o) for p, o in zip(pieces, offsets)}


def test_planted_instances_fill_every_step():
    pieces = packing_facts.planted(random.Random(1), 30, steps=12, arena=100, aligned=True)
    assert len(pieces) == 30 and packing_facts.max_live(pieces) == 100
    assert all(sum(p.size for p in pieces if p.lower <= t < p.upper) == 100 for t in range(12))


def test_a_search_off_by_one_on_the_capacity_is_found(cases, monkeypatch):
    """The search treats its capacity as one byte less: at the optimum it claims no packing fits,
    and pack() misses a capacity it could meet."""
    real = search.Searcher.search
    monkeypatch.setattr(search.Searcher, "search", lambda self, capacity, **kw: real(self, capacity - 1, **kw))
    found = problems_of(cases, "small 0", "search capacity=optimum")
    assert any("claims no packing fits" in p for p in found)
    found = problems_of(cases, "planted 20 aligned pack capacity=optimum")
    assert any("ends past capacity=320" in p for p in found)
    found = problems_of(cases, "descent pack")
    assert any("certified optimal at arena 32, the optimum is 31" in p for p in found)


def test_a_search_whose_run_limits_never_grow_is_found(cases, monkeypatch):
    """The search forgets to count its runs (``runs[stream] += 0``, a mutant verify missed): every restart
    keeps its first limit, so a proof needing one long run is never reached. Built from the search's own
    source with that one change, as the mutation benchmark builds its mutants."""
    source = textwrap.dedent(inspect.getsource(search.Searcher.search))
    assert source.count("runs[stream] += 1") == 1
    scope: dict = {}
    exec(compile(source.replace("runs[stream] += 1", "runs[stream] += 0"), search.__file__, "exec"), vars(search), scope)
    assert problems_of(cases, "gapped 14") == []
    monkeypatch.setattr(search.Searcher, "search", scope["search"])
    (found,) = problems_of(cases, "gapped 14")
    assert "gave up at capacity 88" in found and "without a packing or a proof" in found


def test_a_csv_reader_skipping_a_row_is_found(cases, monkeypatch):
    """The reader drops the last row of every file: the well-formed fixtures no longer read as what
    they hold."""
    class Reader:
        @staticmethod
        def reader(f):
            return list(csv_module.reader(f))[:-1]
    monkeypatch.setattr(minimalloc_csv, "csv", Reader)
    found = problems_of(cases, "MiniMalloc CSV plain.csv")
    assert found and "('h', 2, 3, 8, 1)" in found[0] and "['h']" in found[0]


def test_a_flipped_greedy_tie_rule_is_found(cases, monkeypatch):
    """Equal sizes ordered by start descending (the docs: ties by start, then position): ``plan
    --strategy ge`` no longer prints greedy by size with first fit, and stage 1 of pack() differs."""
    monkeypatch.setattr(greedy, "order_by_size",
                        lambda inst: np.lexsort((np.arange(len(inst)), -inst.lower, -inst.size)))
    found = problems_of(cases, "MiniMalloc CSV plain.csv")
    assert any("--strategy ge --json printed" in p for p in found)
    found = problems_of(cases, "planted 4200")
    assert any("method 'greedy-size' but the offsets" in p for p in found)


def test_a_descent_certifying_without_raising_the_bound_is_found(cases, monkeypatch):
    """The bug fixed in packer._descend: optimal=True with the proved bound left below the arena."""
    real = packer._descend

    def descend(buffers, inst, best, lb, deadline):
        result = real(buffers, inst, best, lb, deadline)
        return attrs.evolve(result, bound=lb) if result.optimal else result
    monkeypatch.setattr(packer, "_descend", descend)
    found = problems_of(cases, "descent pack")
    assert any("optimal=True but bound 30 != arena 31" in p for p in found)


def test_an_accepted_bad_capacity_is_found(cases, monkeypatch):
    """A pack() that skips its capacity check and passes a negative capacity on instead of refusing
    it: the refusal case says so."""
    monkeypatch.setattr(packing_cases_module, "pack", lambda buffers, *, time_limit=None, capacity=None:
                        packer._stages(list(buffers), capacity, None))
    found = problems_of(cases, "pack capacity=-1")
    assert found and "expected InvalidBufferError" in found[0]


def test_verify_runs_the_packing_cases_and_fails_on_a_broken_search(monkeypatch):
    """verify (with its proofs, plan kind) runs every packing case; a search off by one on its capacity
    makes its run fail with errors naming the cases. The packing proofs are cut to one instance here."""
    monkeypatch.setattr(verify_module, "PACKINGS", 1)
    config = VerifyConfig(models=(), examples=0, corpus=False, onnx_node_tests=False, kinds=("plan",))
    clean = verify(config)
    assert clean.packing_cases == (len(packing_cases(config.seed)), 0) and not clean.errors
    real = search.Searcher.search
    monkeypatch.setattr(search.Searcher, "search", lambda self, capacity, **kw: real(self, capacity - 1, **kw))
    broken = verify(config)
    assert broken.packing_cases[1] > 0 and broken.failing()
    assert any(case.startswith("packing case ") and "claims no packing fits" in why for case, why in broken.errors)
    assert verify(attrs.evolve(config, proofs=False)).packing_cases == (0, 0)


def test_verify_tells_a_refused_valid_file_from_a_wrong_answer(cases, monkeypatch):
    """A packing case whose valid input the code under test refuses (its own BadInput) is reported as a refusal,
    one where it raises anything else as a crash: both are failures the implementation announces, unlike a
    wrong answer (a failed check)."""
    from zcspec.checks import packing_csv_cases
    from zcspec.checks.verify_result import VerifyResult
    from zcspec.impl.compiler.memory.packing.errors import BufferFileError
    csv_cases = [c for c in cases if "CSV" in c.label and "aligned" in c.label]
    assert csv_cases

    def refuse(path, *args, **kwargs):
        raise BufferFileError(str(path), "refused on purpose")
    monkeypatch.setattr(packing_csv_cases, "read_minimalloc_csv", refuse)
    result = VerifyResult()
    verify_module._packing_cases(result, csv_cases)
    assert result.errors and set(result.error_kinds) == {"refusal"}, (result.errors, result.error_kinds)

    def crash(path, *args, **kwargs):
        raise KeyError("boom")
    monkeypatch.setattr(packing_csv_cases, "read_minimalloc_csv", crash)
    result = VerifyResult()
    verify_module._packing_cases(result, csv_cases)
    assert result.errors and set(result.error_kinds) == {"crash"}
