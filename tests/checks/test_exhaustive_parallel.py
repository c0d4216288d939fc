"""The exhaustive mode sharded over processes and a Dask cluster gives exactly the single-process run."""
from __future__ import annotations

import os

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.exhaustive import all_graphs, count_graphs, merge_runs, run_exhaustive
from zcspec.checks.exhaustive_parallel import run_exhaustive_sharded
from zcspec.checks.explore_parallel import run_explore
from zcspec.checks.faults.registry import active


def _same(a, b):
    assert a.graphs == b.graphs
    assert a.tally == b.tally
    assert a.failures == b.failures


def test_shards_partition_the_enumeration_and_keep_its_names():
    whole = [g.name for g in all_graphs(2)]
    parts = [[g.name for g in all_graphs(2, shard=(i, 3))] for i in range(3)]
    assert sorted(sum(parts, []), key=lambda n: int(n.split("_")[1])) == whole
    assert all(int(n.split("_")[1]) % 3 == i for i, p in enumerate(parts) for n in p)
    assert count_graphs(2) == len(whole) == 906
    with pytest.raises(ValueError, match="shard"):
        all_graphs(2, shard=(3, 3))


def test_merged_shards_equal_the_single_run_with_findings():
    # A planted planner bug, so the failures (order included) are compared, not only empty lists.
    with active("zc-align-32"):
        single = run_exhaustive(2, kinds=("plan",), strategies=("ge",))
        shards = [run_exhaustive(2, kinds=("plan",), strategies=("ge",), shard=(i, 3)) for i in range(3)]
        parallel = run_exhaustive_sharded(2, ("plan",), ("ge",), workers=2, shards=3)
    assert single.failures and single.tally.violated["LAYOUT-ALIGN"]
    _same(merge_runs(shards), single)
    _same(parallel, single)


def test_progress_reports_the_total_and_reaches_it():
    seen = []
    run = run_exhaustive_sharded(1, ("plan",), ("ge",), workers=2, on_progress=lambda *a: seen.append(a))
    assert seen[-1][0] == run.graphs == 22
    assert any(total == 22 for _, _, total in seen)


def test_cli_workers_print_the_single_process_table(tmp_path, capsys):
    outs = []
    for workers in ("1", "2"):
        assert main(["exhaustive", "--max-nodes", "2", "--strategy", "ge", "--workers", workers, "--quiet",
                     "--save", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        outs.append([line for line in out.splitlines() if " observations checked in " not in line])
        assert "906 graphs, 1812 observations checked" in out
    assert outs[0] == outs[1]


def test_cli_bad_workers_and_unreachable_cluster_exit_2(capsys):
    assert main(["exhaustive", "--max-nodes", "1", "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err
    assert main(["exhaustive", "--max-nodes", "1", "--quiet", "--cluster", "tcp://127.0.0.1:9"]) == 2
    assert "no Dask scheduler answers" in capsys.readouterr().err


def _local_cluster():
    """A local 2-worker Dask cluster, started by the test; CI must have the extra (.ci/run installs it)."""
    try:
        from distributed import LocalCluster
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI must run the cluster test: Dask distributed (the 'cluster' extra) is not installed")
        pytest.skip("Dask distributed (pip install 'zcspec[cluster]') is not installed")
    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)


def test_a_local_dask_cluster_gives_the_single_process_result(tmp_path):
    with _local_cluster() as cluster:
        on_cluster = run_exhaustive_sharded(2, ("plan", "model_file"), ("ge", "compact"),
                                            cluster=cluster.scheduler_address, shards=4)
        # Explore's workers run there too, sharing the database folder.
        explored = run_explore(6, 1.0, workers=2, cluster=cluster.scheduler_address, database=str(tmp_path))
    _same(on_cluster, run_exhaustive(2))
    assert [w.worker for w in explored.workers] == [0, 1] and all(w.tally.cases for w in explored.workers)
    assert explored.tally.cases == sum(w.tally.cases for w in explored.workers)


def test_cli_html_report_draws_the_smallest_failure(tmp_path, capsys):
    page = tmp_path / "exhaustive.html"
    with active("zc-align-32"):
        assert main(["exhaustive", "--max-nodes", "1", "--kinds", "plan", "--strategy", "ge", "--quiet",
                     "--workers", "2", "--save", str(tmp_path), "--html", str(page)]) == 1
    assert f"report written to {page}" in capsys.readouterr().out
    html = page.read_text()
    assert "LAYOUT-ALIGN" in html and html.count("<svg") >= 2   # the graph and its layout
    assert main(["exhaustive", "--max-nodes", "1", "--html", str(tmp_path / "nowhere" / "x.html")]) == 2


@pytest.mark.slow
def test_n3_on_two_workers_and_on_a_local_cluster_equals_the_single_run():
    """The done-when of issue 18 at N=3 (about 16 minutes on 2 cores: -m slow)."""
    single = run_exhaustive(3)
    _same(run_exhaustive_sharded(3, workers=2), single)
    with _local_cluster() as cluster:
        _same(run_exhaustive_sharded(3, cluster=cluster.scheduler_address, shards=8), single)
