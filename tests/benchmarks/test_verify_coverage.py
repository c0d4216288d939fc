"""benchmarks/verify_coverage.py: verify's reach is counted over the suite's arcs, module by module."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.verify_coverage import main, reach_table  # noqa: E402


def test_reach_counts_only_what_the_suite_reaches():
    suite = {"impl/a.py": {(1, 2), (2, 3), (2, -1)}, "impl/b.py": {(5, 6)}, "impl/c.py": set()}
    verify = {"impl/a.py": {(1, 2), (2, 3), (9, 10)}}        # (9, 10): verify only, not counted
    assert reach_table(verify, suite) == {"impl/a.py": (3, 2), "impl/b.py": (1, 0)}


def test_a_data_file_without_branches_is_refused(tmp_path):
    coverage = pytest.importorskip("coverage")
    data = tmp_path / "lines.coverage"
    cov = coverage.Coverage(data_file=str(data), branch=False)
    cov.get_data().add_lines({str(Path(__file__).resolve().parents[2] / "impl" / "__init__.py"): [1]})
    cov.get_data().write()
    with pytest.raises(SystemExit, match="without branches"):
        main(["--verify-data", str(data), "--suite-data", str(data)])


def test_bad_threshold_exits_2():
    with pytest.raises(SystemExit) as e:
        main(["--below", "0"])
    assert e.value.code == 2
