"""The LiteRT campaign's programs, its reduction and its kept finding (google-ai-edge/LiteRT#8928's class).

The drawn programs and the reduction are tested with no LiteRT; the kept finding replays with none;
running the campaign needs the ``litert`` extra (and is marked ``slow`` where it hunts the bug).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.campaign_core import Outcome
from zcspec.checks.foreign.finding import ForeignFinding, replay_finding
from zcspec.checks.foreign.litert_campaign import LitertProgram, litert_programs, reduce, without
from zcspec.checks.foreign.litert_programs import MODELS, VIEWS, Model

FINDING = Path(__file__).parent / "findings" / "litert-8928-view-of-view-in-place.json"
ELEMENTWISE = ("ADD", "MUL", "SUB", "MAXIMUM")


def in_place_over_a_view_read_later(program: dict) -> bool:
    """The class of google-ai-edge/LiteRT#8928: an element-wise operator on a view while a tensor that
    view derives from (through views, or element-wise operators LiteRT may compute in place), not
    the model's input, is read after the operator. LiteRT counts the readers of the operator's input
    and of the root, not of the tensors between."""
    producer = {outs[0]: (op, ins) for op, ins, outs in program["ops"]}
    for k, (op, ins, _) in enumerate(program["ops"]):
        if op not in ELEMENTWISE or producer.get(ins[0], ("", ()))[0] not in VIEWS:
            continue
        shared, t = set(), producer[ins[0]][1][0]
        while t not in program["inputs"]:
            shared.add(t)
            if t not in producer or producer[t][0] not in (*VIEWS, *ELEMENTWISE):
                break
            t = producer[t][1][0]
        if any(set(i) & shared for _, i, _ in program["ops"][k + 1:]):
            return True
    return False


@settings(max_examples=80, deadline=None)
@given(litert_programs(max_steps=10))
def test_drawn_models_are_well_formed_and_round_trip(program):
    m = program.model
    assert m.outputs and m.outputs[-1] == len(m.shapes) - 1
    for op, ins, (out,) in m.ops:
        assert all(i < out for i in ins)                   # every operator reads what came before it
        if op in ELEMENTWISE:
            assert m.shapes[ins[0]] == m.shapes[ins[1]] == m.shapes[out]
        if op in VIEWS:
            assert math.prod(m.shapes[ins[0]]) == math.prod(m.shapes[out])
        if op == "FULLY_CONNECTED":
            assert ins[1] in m.weights
    assert LitertProgram.from_data(json.loads(json.dumps(program.to_data()))) == program


def test_a_model_without_an_operator_rewires_its_readers():
    # t1 = TANH(t0); t2 = RESHAPE(t1); t3 = ADD(t2, t0): without the TANH, the RESHAPE reads t0.
    m = Model("m", "", ((2, 3), (2, 3), (2, 3), (2, 3)),
              (("TANH", (0,), (1,)), ("RESHAPE", (1,), (2,)), ("ADD", (2, 0), (3,))), (0,), (3,))
    smaller = without(m, 0)
    assert smaller.ops == (("RESHAPE", (0,), (1,)), ("ADD", (1, 0), (2,))) and smaller.outputs == (2,)
    assert without(m, 2) is None                          # its result is the output


def test_an_operator_whose_shape_differs_goes_only_when_nothing_reads_it():
    m = Model("m", "", ((2, 3), (6,), (6,), (2, 3), (), (1, 2, 3)),
              (("RESHAPE", (0,), (1,)), ("TANH", (1,), (2,)), ("TANH", (0,), (3,)), ("EXPAND_DIMS", (3, 4), (5,))),
              (0,), (5,), axes=(4,))
    assert without(m, 0) is None                          # TANH reads its (6,) result
    dead = without(without(m, 1), 0)                      # the unread TANH first, then the RESHAPE
    assert [op for op, _, _ in dead.ops] == ["TANH", "EXPAND_DIMS"] and dead.axes == (2,)


def test_reduce_deletes_operators_while_the_finding_stays():
    m = Model("m", "", ((2, 3),) * 4, (("TANH", (0,), (1,)), ("RELU", (1,), (2,)), ("ADD", (2, 0), (3,))), (0,), (3,))

    def run(program):        # stands in for LiteRT: the bug needs the ADD
        found = any(op == "ADD" for op, _, _ in program.model.ops)
        return Outcome(program, ("LAYOUT-NO-OVERLAP",) if found else (), (), 1.0, not found, {})

    reduced = reduce(run(LitertProgram(m)), run)
    assert [op for op, _, _ in reduced.program.model.ops] == ["ADD"] and reduced.kind == "confirmed"


def test_the_kept_finding_replays_without_litert():
    finding = ForeignFinding.load(str(FINDING))
    assert (finding.planner, finding.kind, finding.claims) == ("litert", "confirmed", ("LAYOUT-NO-OVERLAP",))
    assert finding.max_abs_diff > 0.1 and len(finding.program["ops"]) <= 6
    assert in_place_over_a_view_read_later(finding.program)
    assert replay_finding(finding).still_fails
    assert main(["replay", str(FINDING)]) == 1


def test_the_class_is_told_from_its_clean_twin():
    # fc-view-read-twice (LiteRT#8928, made by hand) is of the class; fc-view-add-in-place, which
    # reads nothing of that memory after the ADD, is not.
    data = {m.name: LitertProgram(m).to_data() for m in MODELS}
    assert in_place_over_a_view_read_later(data["fc-view-read-twice"])
    assert not in_place_over_a_view_read_later(data["fc-view-add-in-place"])


@pytest.mark.slow
def test_the_campaign_finds_litert_8928_from_a_clean_start(tmp_path):
    pytest.importorskip("ai_edge_litert")
    from zcspec.checks.foreign.campaign_core import write_finding
    from zcspec.checks.foreign.litert_campaign import campaign
    result = campaign(examples=3000, seed=0, budget=300, max_steps=10)
    assert result.finding is not None and result.finding.kind == "confirmed"
    assert result.finding.claims == ("LAYOUT-NO-OVERLAP",)
    data = result.finding.program.to_data()
    assert in_place_over_a_view_read_later(data) and len(data["ops"]) <= 6, result.finding.program.source()
    path = write_finding("litert", result.finding, str(tmp_path), result.versions)
    assert replay_finding(ForeignFinding.load(path)).still_fails
