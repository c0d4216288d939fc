"""``zcspec verify --artefacts DIR``: the same sources write the same files, byte for byte, in two processes;
a changed artefact is named by its case; the verdict says how the run failed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from zcspec.checks import verify_artefacts as va
from zcspec.checks.scenario import Scenario
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.checks.verify_artefacts import DIGESTS, VERDICT, ArtefactWriter, first_difference, read_digests, verdict
from zcspec.spec.registry import all_invariants

ZCSPEC = [sys.executable, "-m", "zcspec.checks.cli.main"]
SMALL = ["verify", "builtin:atomic_clean", "--no-execution", "--no-proofs", "--examples", "2", "--quiet"]


# A small verify in a process of its own: the zoo's plans and executions of one model, the device probes (their
# allocators run on several host threads, which take turns: the observation is the same on every run), a short
# campaign.
_SMALL_RUN = """
import sys
from zcspec.checks.cli.verify import invariant_table
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.verify_artefacts import verdict
from zcspec.spec.registry import all_invariants
config = VerifyConfig(models=("builtin:atomic_clean",), strategies=("ge",), kinds=("plan", "execution", "device"),
                      examples=3,
                      proofs=False, corpus=False, onnx_node_tests=False, acl_refusals=False, artefacts=sys.argv[1])
result = verify(config)
invariants = all_invariants()
ids = [i.id for i in invariants]
result.artefacts.finish(invariant_table(result, invariants), verdict(result, ids, ok=True, thin=[]))
"""


def _two_processes(tmp_path, cmd) -> tuple[Path, Path]:
    # Two hash seeds: nothing written may follow a set's order in one process.
    runs = [subprocess.Popen([*cmd, str(tmp_path / f"run{k}")], env={**os.environ, "PYTHONHASHSEED": str(k)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in (1, 2)]
    for r in runs:
        out, err = r.communicate(timeout=600)
        assert r.returncode == 0, out[-2000:] + err[-2000:]
    return tmp_path / "run1", tmp_path / "run2"


def test_two_processes_write_identical_artefacts(tmp_path):
    first, second = _two_processes(tmp_path, [sys.executable, "-c", _SMALL_RUN])
    _identical(first, second, {"zoo.jsonl", "campaign.jsonl", "foreign.jsonl"})


@pytest.mark.slow
def test_two_cli_runs_write_identical_artefacts(tmp_path):
    first, second = _two_processes(tmp_path, [*ZCSPEC, *SMALL, "--artefacts"])
    _identical(first, second, {"zoo.jsonl", "campaign.jsonl", "foreign.jsonl", "corpus.jsonl"})
    assert json.loads((first / VERDICT).read_text())["ok"] is True


def _identical(first: Path, second: Path, phases: set[str]) -> None:
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert phases | {"cases.tsv", "coverage.txt", DIGESTS, VERDICT} <= set(names)
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert first_difference(first, second) == ""
    assert set(read_digests(first)) == set(names) - {DIGESTS, VERDICT}
    text = "".join((first / n).read_text() for n in names)
    assert str(Path.cwd()) not in text and str(Path(__file__).resolve().parents[2]) not in text


def _execution_run(folder: Path, soc: str = "ascend910b"):
    config = VerifyConfig(models=("builtin:atomic_clean",), strategies=("ge",), soc=soc, kinds=("execution",),
                          examples=0, proofs=False, corpus=False, onnx_node_tests=False, acl_refusals=False,
                          artefacts=str(folder))
    result = verify(config)
    ids = [i.id for i in all_invariants()]
    result.artefacts.finish(["table"], verdict(result, ids, ok=True, thin=[]))
    return result


def test_executions_write_their_trace_and_outputs_and_a_changed_one_is_named(tmp_path):
    _execution_run(tmp_path / "a")
    _execution_run(tmp_path / "b")
    assert first_difference(tmp_path / "a", tmp_path / "b") == ""
    first = json.loads((tmp_path / "a" / "zoo.jsonl").read_text().splitlines()[0])
    call = next(o for o in first["observations"] if "events" in o)
    assert call["events"] and call["outputs"] and call["outputs"][0]["digest"]
    assert set(first["compiled"]) == {"graph", "plan", "model_file"}
    # Another SoC builds other files: the first case whose line differs is named.
    _execution_run(tmp_path / "c", soc="ascend310p")
    assert first_difference(tmp_path / "a", tmp_path / "c").startswith(
        "cases.tsv, zoo.jsonl differ; first: zoo case 'builtin:atomic_clean [execution, ge]'")


def test_the_verdict_names_claims_and_errors_by_kind(tmp_path):
    writer = ArtefactWriter.into(tmp_path / "v")

    @attrs.frozen
    class V:
        invariant_id: str

    result = _execution_run(tmp_path / "ok")
    result.findings = [attrs.make_class("F", ["case", "violation"])("zoo:x", V("MEM-NO-OVERLAP"))]
    result.errors = [("zoo:y", "KeyError: 'a'"), ("ACL refusal z", "not refused")]
    result.error_kinds = ["crash", "check"]
    ids = [i.id for i in all_invariants()]
    writer.finish([], verdict(result, ids, ok=False, thin=["V1-HCCL-COPY"]))
    v = json.loads((tmp_path / "v" / VERDICT).read_text())
    assert v["claims"] == {"MEM-NO-OVERLAP": 1} and v["error_kinds"] == {"crash": 1, "check": 1}
    assert v["errors"][0] == {"case": "zoo:y", "kind": "crash", "message": "KeyError: 'a'"}
    assert v["below_floor"] == ["V1-HCCL-COPY"] and v["ok"] is False


def test_a_folder_with_files_is_refused_on_the_command_line(tmp_path):
    (tmp_path / "old.txt").write_text("x")
    done = subprocess.run([*ZCSPEC, *SMALL, "--artefacts", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "new or empty folder" in done.stderr and str(tmp_path) in done.stderr


@pytest.mark.parametrize("error, kind", [(KeyError("k"), "crash"), (None, "refusal")])
def test_an_impl_refusal_is_told_from_a_crash(error, kind):
    from zcspec.checks.verify_result import VerifyResult, record_raised
    from zcspec.impl.compiler.errors import CycleError
    result = VerifyResult()
    record_raised(result, "zoo:x", error if error is not None else CycleError(("a", "b")))
    assert result.error_kinds == [kind]


def _racing_calls(first: int, second: int) -> list:
    """Two calls of one scenario whose threads raced: each with its buffer's address, the later one
    showing the unload."""
    return [{"buffers": [{"address": first, "size": 8}], "events": [{"kind": "call_end"}]},
            {"buffers": [{"address": second, "size": 8}], "events": [{"kind": "call_end"}, {"kind": "unload"}]}]


def test_racing_calls_are_written_whatever_the_schedule(tmp_path, monkeypatch):
    """Which of two racing calls runs (and is recorded) first varies between runs; the artefact of a
    scenario with threads must not: its calls are written address-free and in a sorted order. A scenario
    without threads keeps its addresses and order."""
    b = GraphBuilder("g")
    b.output(b.op("Relu", [b.input("x", (2,))], name="r"))
    graph = b.build()
    base = va.ADDRESS_SPACE
    schedules = [_racing_calls(base + 512, base + 1024), _racing_calls(base + 1024, base + 512)]
    monkeypatch.setattr(va, "to_data", lambda o: o)
    monkeypatch.setattr(va, "compiled", lambda scenario: {})
    lines = {}
    for threads in (0, 2):   # a campaign's scenario names its runs (a differential run, then a v1 run)
        run = {"runtime": "v1", "threads": threads} if threads else {"runtime": "v1"}
        scenario = Scenario("execution", graph, runtime={"runs": [{"runtime": "differential"}, run]})
        for k, observations in enumerate(schedules):
            writer = ArtefactWriter.into(tmp_path / f"t{threads}-{k}")
            writer.case("campaign", "c", scenario=scenario, observations=observations)
            writer._file("campaign").close()
            lines[threads, k] = (tmp_path / f"t{threads}-{k}" / "campaign.jsonl").read_text()
    assert lines[2, 0] == lines[2, 1] and "<address>" in lines[2, 0]
    assert lines[0, 0] != lines[0, 1] and str(base + 512) in lines[0, 0]
