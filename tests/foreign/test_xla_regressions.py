"""Two XLA plan-quality regressions, kept as dumps of one program by several jax releases
(checks/foreign/xla_regressions.py): every plan is clean, and the plans alone show what got worse."""
from __future__ import annotations

import json
import subprocess
import sys

import attrs
import pytest

from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases
from zcspec.checks.foreign.xla_dump import find_modules, read_module
from zcspec.checks.foreign.xla_regressions import PAIRS, REGRESSIONS, main, write_dumps
from zcspec.checks.plan_diff import diff_plans
from zcspec.spec.check import check
from zcspec.spec.invariants.layout_bound import activation_arenas, arena_peak
from zcspec.spec.observables.plan import PlanObservation

XLA = PROGRAMS / "xla"


@attrs.frozen
class Donation:
    """What a plan shows of its one donated input and the output of the same size."""

    arena: int                # the activation arenas' bytes, summed
    lower_bound: int          # their peaks of live bytes, summed (the spec's lower bound)
    temps: int                # families that own bytes in the activation arenas
    full_size: tuple[str, ...]    # families of the input's size or more, other than the input's own
    in_input_bytes: bool      # the output lies in the input's bytes
    output_root: str          # the root of the output's family: the input when computed in place over it


def donation(plan: PlanObservation) -> Donation:
    (x,) = [t for t in plan.tensors if t.name in plan.graph_inputs and t.size == max(
        u.size for u in plan.tensors if u.name in plan.graph_inputs)]
    (out,) = [t for t in plan.tensors if t.name in plan.graph_outputs and t.size == x.size]
    arenas = activation_arenas(plan)
    owners = [t for t in plan.tensors if t.alias_of is None]
    return Donation(
        arena=sum(plan.regions[r] for r in arenas), lower_bound=sum(arena_peak(plan, r) for r in arenas),
        temps=sum(t.region in arenas for t in owners),
        full_size=tuple(sorted(t.name for t in owners if t.size >= x.size and t.name != x.name)),
        in_input_bytes=out.region == x.region and out.offset < x.offset + x.size and x.offset < out.offset + out.size,
        output_root=plan.root(out.name))


def _plan(folder: str) -> PlanObservation:
    return read_module(find_modules(XLA / folder)[0])


# Measured from the kept dumps (the numbers the report and docs/foreign-planners.md quote).
FACTS = {
    # openxla/xla#45912: 0.7.1 computes exp(x) and the product in x's buffer; 0.7.2 gives exp(x) a
    # temporary of x's 256 KiB and writes the product into x's bytes from that temporary.
    "donated-loop-reads-intermediate-jax0.7.1": Donation(196, 33, 7, (), True, "x_initial.1"),
    "donated-loop-reads-intermediate-jax0.7.2": Donation(262_276, 262_173, 6, ("broadcast_multiply_fusion", "exp.1"),
                                                         True, "broadcast_multiply_fusion"),
    # openxla/xla#20440: x is copied to a temporary and back into its own bytes, then updated there;
    # the same in the issue's release and the newest, and gone with region analysis.
    "donated-read-then-update-jax0.4.36": Donation(40_000, 40_000, 1, ("copy", "copy.1"), True, "copy"),
    "donated-read-then-update-jax0.10.2": Donation(40_000, 40_000, 1, ("copy", "copy.1"), True, "copy"),
    "donated-read-then-update-region-analysis-jax0.10.2": Donation(0, 0, 0, (), True, "x.1"),
}


@pytest.mark.parametrize("folder", sorted(FACTS))
def test_each_version_of_each_program_is_clean_and_shows_its_donation(folder):
    plan = _plan(folder)
    assert check(plan).ok
    assert donation(plan) == FACTS[folder]


def test_the_kept_folders_say_which_release_made_them_and_that_the_result_matched_eager():
    for folder in FACTS:
        meta = json.loads((XLA / folder / "program.json").read_text())
        assert folder == f"{meta['program']}-jax{meta['jax']}" and meta["jax"] == meta["jaxlib"]
        assert meta["expect"] == "clean" and meta["matches_eager"] is True
        assert meta["issue"] in ("openxla/xla#45912", "openxla/xla#20440")
    assert {c.name for c in foreign_cases() if c.name.startswith("donated-") and "jax" in c.name} == set(FACTS)


def test_45912_the_intermediate_leaves_the_donated_buffer_from_jaxlib_0_7_2():
    old, new = _plan("donated-loop-reads-intermediate-jax0.7.1"), _plan("donated-loop-reads-intermediate-jax0.7.2")
    x = next(t for t in new.tensors if t.name == "x_initial.1")
    (old_exp,) = [t for t in old.tensors if t.name.startswith("exp")]
    (new_exp,) = [t for t in new.tensors if t.name.startswith("exp")]
    assert (old_exp.region, old_exp.alias_of) == (x.region, "x_initial.1")
    assert new.arena(new_exp.region).kind == "activations" and new_exp.size == x.size and new_exp.alias_of is None
    # The temporary arena grows by x's size less one 64-byte slot the loop's scalars no longer need.
    assert donation(new).arena - donation(old).arena == x.size - 64


def test_20440_two_full_copies_one_in_a_temporary_one_back_in_the_donated_bytes():
    plan = _plan("donated-read-then-update-jax0.10.2")
    by_name = {t.name: t for t in plan.tensors}
    x, there, back = by_name["x.1"], by_name["copy.1"], by_name["copy"]
    assert plan.arena(there.region).kind == "activations" and there.size == x.size
    assert (back.region, back.offset, back.size) == (x.region, x.offset, x.size) and back.alias_of is None
    assert x.last < back.first    # x's bytes are free when the copy of its copy is written back into them
    flag = donation(_plan("donated-read-then-update-region-analysis-jax0.10.2"))
    assert flag.arena == 0 and flag.output_root == "x.1"


def test_the_programs_are_named_once_and_the_maker_refuses_an_unknown_name(capsys):
    names = [p.name for p in REGRESSIONS]
    assert len(set(names)) == len(names) and all(p.expect == "clean" and p.issue for p in REGRESSIONS)
    with pytest.raises(SystemExit) as e:
        main(["--python", sys.executable, "--only", "no-such-program"])
    assert e.value.code == 2 and "no-such-program" in capsys.readouterr().err


def test_the_maker_runs_as_a_script_without_jax():
    run = subprocess.run([sys.executable, "-m", "zcspec.checks.foreign.xla_regressions", "--help"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "--python" in run.stdout


def test_a_fresh_dump_is_named_by_the_release_that_made_it(tmp_path):
    jax = pytest.importorskip("jax")
    (line,) = write_dumps([sys.executable], tmp_path, only=("donated-read-then-update-region-analysis",))
    folder = tmp_path / f"donated-read-then-update-region-analysis-jax{jax.__version__}"
    assert line.startswith(folder.name) and "matches eager" in line
    meta = json.loads((folder / "program.json").read_text())
    assert meta["xla_flags"] == "--xla_cpu_copy_insertion_use_region_analysis=true"
    assert donation(read_module(find_modules(folder)[0])).arena == 0


@pytest.mark.parametrize("old, new, regression", [
    *((good, bad, True) for good, bad, _ in PAIRS),
    *((bad, good, False) for good, bad, _ in PAIRS),
    ("donated-read-then-update-jax0.4.36", "donated-read-then-update-jax0.10.2", False),   # the bug in both
])
def test_zcspec_diff_finds_each_regression_from_the_plans_alone(old, new, regression):
    """The regression is the diff's: no claim changes its verdict, reused memory grows."""
    diff = diff_plans(_plan(old), _plan(new))
    assert diff.ok is not regression
    assert [c for c in diff.claims if "violated" in c[1:]] == []
    if regression:
        assert diff.regressions[0].startswith("reused memory grew")
