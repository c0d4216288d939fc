"""verify's crafted model files (checks/strategies/model_file_crafts.py CRAFTS, checks/verify_cases.py CRAFTED_MODELS):
each is refused by the loader's check it is aimed at, verify's cases of them pass, and a loader that drops one
of those checks (planted here by replacing the refusal with ``pass`` in a copy of the function) fails verify
through a claim: MF-WELL-FORMED for the header, MF-DETERMINED for the re-signed metadata.

Left unreached on purpose (no file reaches them): schema.field's "missing" (load._top has refused any missing
top-level key before), consistency._io's "is not a planned tensor" (_attributes has refused such an I/O entry
before), artefact_json's union of two types, ``Any`` and unknown scalar type (no field of the options or the
plan has such a type). consistency._copied_inputs's walk along a chain of copies is reached by a compiled
file only (an offline build of a graph input copied twice, tests/model_file/test_taskgen.py), not a crafted one.
"""
from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from zcspec.checks import verify as V
from zcspec.checks import verify_cases as C
from zcspec.checks.errors import ScenarioError
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.model_file_crafts import CRAFT, CRAFTS, crafted_mutations
from zcspec.checks.strategies.model_files import craft_name, edit
from zcspec.checks.verify_one_case import check_case
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file import consistency, load as loader, schema
from zcspec.impl.compiler.model_file.encode import HEADER, encode
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.options import CompileOptions

# The refusal each craft is aimed at, as the loader's message says it.
AIMED = {
    "header_cut": r"header: file is \d+ bytes, shorter than",
    "header_length": r"header length: \d+, expected 64",
    "not_json": r"metadata: not UTF-8 JSON",
    "not_object": r"metadata: top level is not an object",
    "top_keys": r"metadata: fields missing",
    "top_type": r"metadata\.(tasks|weights): expected (dict|list)",
    "schema_not_object": r"(tasks|inputs|outputs|zero_copy|weights)\[\d+\](\.slots\[\d+\])?: expected an object",
    "schema_fields": r"\]: fields missing \[.*\] / unexpected",
    "schema_type": r"\.\w+: expected (int|str|bool|list), got",
    "schema_ints": r"\.shape: .* must hold integers only",
    "schema_bools": r"\.zero_copy_(in|out): .* must hold booleans only",
    "attr_value": r"\.attrs\.crafted: unsupported attribute value",
    "attr_item": r"\.attrs\[\d+\]: expected \[name, value\]",
    "artefact_not_object": r"(options|plan)[\w.\[\]]*: expected an object, got list",
    "artefact_missing": r"(options|plan)[\w.\[\]]*: missing key",
    "artefact_unknown": r"(options|plan)[\w.\[\]]*: unknown key\(s\) 'crafted'",
    "artefact_strings": r"(disabled_passes|no_zero_copy_ops): expected a list of strings",
    "artefact_list": r"plan\.[\w.\[\]]+: expected a list, got str",
    "artefact_mapping": r"plan\.(regions|branches): expected an object, got list",
    "region_unknown": r"plan\.regions\.scratch: unknown region",
    "region_size": r"plan\.regions\.\w+: -?\d+ is not an integer in",
    "region_missing": r"plan\.regions: missing region",
    "order_duplicate": r"plan\.order: node names must be unique",
    "tensor_duplicate": r"duplicate tensor",
    "lifetime_range": r"lifetime \[\d+, \d+\] outside the \d+ steps",
    "alias_self": r"a tensor cannot alias itself",
    "alias_outside": r"lies outside its root",
    "block_duplicate": r"block ids must be unique",
    "io_attribute_count": r"plan\.attributes\.(inputs|outputs): \d+ entries for \d+ model",
    "relative_offsets": r"relative_offsets: piece at \+\d+ .* is no tensor the plan places there",
    "no_kernel": r"no kernel '\w+' in the device library",
    "negative_dim": r"shape \(-\d+.*\) must be non-negative integers",
    "task_order": r"\.node: .* comes before task \d+'s node",
    "task_after": r"\.after: .* must name earlier tasks",
    "lifetime_miss": r"lifetime \[\d+, \d+\] misses step",
    "branch_node": r"plan\.branches\.\w+: .*not a labelled node",
    "tensor_batch": r"\.batch: 'crafted' is not a branch of the model",
    "merge_labels": r"\.attrs\.labels: .* must list batch labels",
    "weight_gap": r"blob_offset: \d+, but the weights before it end",
    "weight_past_blob": r"past the \d+-byte blob",
    "weight_dtype": r"weights\[\d+\]: (unknown|.*shape)",
    "weight_nbytes": r"bytes of data for",
    "weight_region": r"ends past the weight region",
    "weight_offset": r"offset disagrees with the plan's placement",
    "blob_tail": r"the weight table covers \d+ bytes of the \d+-byte blob",
}
ACCEPTED = {"attr_nonfinite"}   # a legal file: a non-finite float attribute, as graph_json writes one


def _built(model: str) -> bytes:
    return encode(compile_stages(load(model), CompileOptions()).model)


BUILT = {m: _built(m) for m in C.CRAFTED_MODELS}


def test_every_craft_has_its_aim():
    assert set(AIMED) | ACCEPTED == set(CRAFTS)


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_every_craft_is_refused_by_the_check_it_is_aimed_at(seed):
    applied = set()
    for model, data in BUILT.items():
        for m in crafted_mutations(data, seed):
            name = craft_name(data, m)
            applied.add(name)
            bad, _ = edit(data, m)
            if name in ACCEPTED:
                loader.load_model(bad)
                continue
            with pytest.raises(ModelFormatError) as e:
                loader.load_model(bad)
            assert re.search(AIMED[name], str(e.value)), f"{model} {name}@{m['at']}: refused for {e.value}"
    assert applied == set(CRAFTS)     # every craft applies to one of verify's crafted models


def test_a_craft_picks_the_next_that_applies_and_a_file_without_metadata_is_cut():
    data = BUILT["builtin:atomic_clean"]    # no weights: a weight craft gives way to the next craft
    i = CRAFTS.index("weight_gap")
    assert craft_name(data, {"op": CRAFT, "at": i}) not in {"weight_gap", "merge_labels"}
    assert craft_name(b"\0" * 10, {"op": CRAFT, "at": 7}) == "header_cut"
    assert len(edit(b"\0" * 10, {"op": CRAFT, "at": 7})[0]) < HEADER.size
    with pytest.raises(ScenarioError, match="runtime.mutation.at"):
        edit(data, {"op": CRAFT, "at": -1})


def _craft_cases(craft: str | None = None) -> list:
    config = V.VerifyConfig(models=C.CRAFTED_MODELS, kinds=("model_file",))
    return [(case, s) for case, s in C.zoo_cases(config)
            if " craft " in case and (craft is None or f" craft {craft}@" in case)]


def _verify(cases) -> V.VerifyResult:
    result = V.VerifyResult()
    for case, scenario in cases:
        check_case(result, case, scenario, prove=False)
    return result


def test_verify_runs_every_craft_and_its_cases_pass():
    cases = _craft_cases()
    assert {c.split(" craft ")[1].split("@")[0] for c, _ in cases} == set(CRAFTS)
    result = _verify(cases)
    assert not result.findings and not result.errors
    assert result.tally.exercised["MF-WELL-FORMED"] >= 2 * len(C.CRAFTED_MODELS)    # the header crafts
    assert result.tally.exercised["MF-DETERMINED"] >= len(cases) // 2


def test_a_crafted_scenario_replays_from_its_mutation():
    data = BUILT["builtin:constants"]
    (m,) = [m for m in crafted_mutations(data) if craft_name(data, m) == "weight_offset"]
    (report,) = evaluate(Scenario("model_file", load("builtin:constants"), CompileOptions(), {"mutation": m}))
    assert report.ok and "MF-DETERMINED" in report.exercised


def _planted(module, name: str, marker: str):
    """``module.name`` with the one statement on the line holding ``marker`` (a refusal) replaced by ``pass``."""
    src = textwrap.dedent(inspect.getsource(getattr(module, name)))
    (line,) = [i + 1 for i, text in enumerate(src.splitlines()) if marker in text]
    tree = ast.parse(src)
    hits = 0
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for k, stmt in enumerate(body):
                if isinstance(stmt, ast.stmt) and stmt.lineno == line and not isinstance(stmt, ast.FunctionDef):
                    body[k], hits = ast.copy_location(ast.Pass(), stmt), hits + 1
    assert hits == 1, f"{name}: no refusal statement starts on the line of {marker!r}"
    namespace = dict(vars(module))
    exec(compile(ast.fix_missing_locations(tree), inspect.getsourcefile(module), "exec"), namespace)
    return namespace[name]


# (module, function, the refusal's marker, the craft aimed at it, the claim that must fail)
PLANTED = [
    (loader, "_header", '"header length"', "header_length", "MF-WELL-FORMED"),
    (loader, "_check_slot", "must be non-negative integers", "negative_dim", "MF-DETERMINED"),
    (loader, "_check_branches", "not a labelled node", "branch_node", "MF-DETERMINED"),
    (consistency, "check_regions", "unknown region", "region_unknown", "MF-DETERMINED"),
    (consistency, "_tensors", "duplicate tensor", "tensor_duplicate", "MF-DETERMINED"),
    (consistency, "_tensors", "block ids must be unique", "block_duplicate", "MF-DETERMINED"),
    (consistency, "_relative_offsets", "is no tensor the plan places there", "relative_offsets", "MF-DETERMINED"),
    (consistency, "check_consistency", "offset disagrees with the plan", "weight_offset", "MF-DETERMINED"),
    (schema, "bools", "must hold booleans only", "schema_bools", "MF-DETERMINED"),
]


@pytest.mark.parametrize("module, name, marker, craft, claim", PLANTED, ids=[p[3] for p in PLANTED])
def test_a_loader_that_drops_a_refusal_fails_verify_through_a_claim(monkeypatch, module, name, marker, craft,
                                                                     claim):
    cases = _craft_cases(craft)
    assert cases and not _verify(cases).findings
    real = getattr(module, name)
    bad = _planted(module, name, marker)
    monkeypatch.setattr(module, name, bad)
    if getattr(loader, name, None) is real:     # load.py imports check_regions by name
        monkeypatch.setattr(loader, name, bad)
    result = _verify(cases)
    assert claim in {f.violation.invariant_id for f in result.findings}, (result.findings, result.errors)

