"""LAYOUT-STREAM-ORDER speaks of the streams' schedules only on a plan that has several streams.

Users saw ``zcspec check`` report "neither is done with before the other is touched in every schedule of
the streams" (and each tensor "used by no task") on a plan that declares no streams: the predicate ran
its sweep whatever the precondition said. On one stream or none the steps are the only order, and
LAYOUT-NO-OVERLAP reports the shared bytes in those terms; an edge backwards in order is still refused,
in words that name no stream. Broken on purpose once (the early return removed): the first two tests
failed on the message "... in every schedule of the streams: 'x' is used by no task ...".
"""
from __future__ import annotations

import json

import pytest

from zcspec.checks.cli.main import main
from zcspec.spec.examples.build import plan
from zcspec.spec.invariants.layout import NO_OVERLAP
from zcspec.spec.invariants.layout_streams import STREAM_ORDER

FM = "feature_map"
# Two graph inputs live at both steps and share bytes [256, 512): a violation whatever the streams.
SHARED_INPUTS = [("x", FM, 0, 512, 0, 1), ("y", FM, 256, 512, 0, 1)]
INPUT_FACTS = dict(graph_inputs=("x", "y"), producers={}, consumers={"x": (1,), "y": (1,)})


def _mentions_streams(violations) -> list[str]:
    return [str(v) for v in violations if "stream" in v.message or "schedule" in v.message]


@pytest.mark.parametrize("streams", [{}, {"n0": 0, "n1": 0}], ids=["no streams", "one stream"])
def test_shared_bytes_without_several_streams_are_no_overlap_s_to_report(streams):
    p = plan(SHARED_INPUTS, streams=streams, **INPUT_FACTS)
    assert list(NO_OVERLAP.violations(p))          # the sharing is still found, by the step claim
    assert not STREAM_ORDER.exercised(p)
    assert list(STREAM_ORDER.violations(p)) == []


@pytest.mark.parametrize("streams", [{}, {"n0": 0, "n1": 0, "n2": 0}], ids=["no streams", "one stream"])
def test_an_edge_backwards_in_order_is_refused_in_words_without_streams(streams):
    rows = [("a", FM, 0, 512, 0, 1), ("b", FM, 512, 512, 2, 2)]
    p = plan(rows, producers={"a": "n0", "b": "n2"}, consumers={"a": (1,)}, control={"n1": ("n2",)},
             streams=streams)
    found = list(STREAM_ORDER.violations(p))
    assert [v.culprit for v in found] == ["node 'n1'"]
    assert "later in order" in found[0].message
    assert _mentions_streams(found) == []


def test_on_two_streams_the_message_still_speaks_of_their_schedules():
    p = plan(SHARED_INPUTS, streams={"n0": 0, "n1": 1}, **INPUT_FACTS)
    found = list(STREAM_ORDER.violations(p))
    assert found and all("every schedule of the streams" in v.message for v in found)


def test_zcspec_check_of_a_plan_without_streams_says_nothing_of_schedules(tmp_path, capsys):
    """The report users read: another planner's plan with no ``streams`` key."""
    def tensor(name, offset):
        return {"name": name, "region": "a", "offset": offset, "size": 64, "aligned_size": 64,
                "first": 0, "last": 1, "block": None, "zero_copy": False, "alias_of": None}
    path = tmp_path / "no-streams.json"
    path.write_text(json.dumps({"order": ["n0", "n1"], "tensors": [tensor("x", 0), tensor("y", 32)],
                                "regions": {"a": 96}, "graph_inputs": ["x", "y"],
                                "arenas": {"a": {"kind": "activations", "alignment": 1}}}))
    code = main(["check", str(path), "--no-compact"])
    out = capsys.readouterr().out
    assert code == 1 and "LAYOUT-NO-OVERLAP: tensor 'x' and tensor 'y'" in out
    assert "schedule" not in out and "LAYOUT-STREAM-ORDER" not in out
