"""The GE case catalogue itself (zcspec.checks.cases.ge.catalogue): records that say where each case comes
from, and expectations whose failure says what GE expects and what zcspec gives."""
from __future__ import annotations

import pytest

from zcspec.checks.cases.ge.all import CASES, cases_of
from zcspec.checks.cases.ge.catalogue import GeCase, GeMismatch, expect, fact, refuses


def test_every_case_has_one_key_and_names_its_ge_test():
    assert len({c.key for c in CASES}) == len(CASES)
    for c in CASES:
        assert c.ge_file.endswith(".cc") and c.ge_test, c.key
        assert c.label.startswith(f"{c.ge_file} TEST_F {c.ge_test} (checks/cases/ge/{c.module}.py::")
        assert (c.status == "deviation") == bool(c.row and c.reason), c.key


def test_a_parametrized_port_is_one_record_per_parameter_set():
    align = [c for c in cases_of("mem_assigner_single_stream") if c.function == "MemReuseUtils_AlignMemOffset"]
    assert [c.ge_test for c in align] == ["MemReuseUtils_AlignMemOffset_Zero",
                                          "MemReuseUtils_AlignMemOffset_AlreadyAligned",
                                          "MemReuseUtils_AlignMemOffset_NotAligned"]
    assert align[2].name == "MemReuseUtils_AlignMemOffset[MemReuseUtils_AlignMemOffset_NotAligned]"
    with pytest.raises(ValueError, match="no GE case module 'nope'"):
        cases_of("nope")


def test_a_record_must_be_a_match_or_a_deviation_with_its_row_and_reason():
    with pytest.raises(ValueError, match="a deviation needs its docs/ge-deviations.md row and a reason"):
        GeCase("m", "f", "x_unittest.cc", "f", "deviation", lambda: None, row="P1")
    with pytest.raises(ValueError, match="a match has no deviation row or reason"):
        GeCase("m", "f", "x_unittest.cc", "f", "match", lambda: None, reason="GE: 1; zcspec: 2")
    with pytest.raises(ValueError, match="status 'maybe'"):
        GeCase("m", "f", "x_unittest.cc", "f", "maybe", lambda: None)


def test_a_mismatch_says_what_ge_expects_and_what_zcspec_gives():
    expect(9216, 9216, "memory_size")
    with pytest.raises(GeMismatch, match=r"^memory_size: GE expects 9216, zcspec gives 10240$"):
        expect(10240, 9216, "memory_size")
    with pytest.raises(GeMismatch, match=r"^GE expects a:0 reuses c:0; in zcspec it does not hold \(zcspec gives 3\)$"):
        fact(False, "a:0 reuses c:0", 3)


def test_refuses_wants_the_error_ge_expects():
    with refuses(KeyError, "a bad name", match="bad") as caught:
        raise KeyError("bad name")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(GeMismatch, match="GE refuses a bad name; zcspec accepts it .no KeyError raised."):
        with refuses(KeyError, "a bad name"):
            pass
    with pytest.raises(GeMismatch, match="does not match 'workspace'"):
        with refuses(KeyError, "a bad name", match="workspace"):
            raise KeyError("bad name")
    with pytest.raises(ZeroDivisionError):   # another exception is zcspec's own, not GE's refusal
        with refuses(KeyError):
            raise ZeroDivisionError
