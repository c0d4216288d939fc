"""spec/plan_schema.json, the published plan contract, mirrors the one strict reader.

The schema's keys are the observation's attrs fields plus the reader's informational keys, at every
level, so a field added to the observation without the schema fails here; the examples of
docs/plan-format.md, every kept foreign program's import and `zcspec plan --json` output validate
and read; malformed plans are refused by both the schema and the reader.
"""
from __future__ import annotations

import copy
import json
import re
import types
import typing
from pathlib import Path

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.cli.schema_cmd import plan_schema_text
from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.programs import foreign_cases
from zcspec.checks.zoo import load
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check
from zcspec.spec.errors import SpecError
from zcspec.spec.observables import plan_from_contract
from zcspec.spec.observables.plan import (Alignment, Arena, Block, ByteCopy, ByteRange, ContinuousGroup,
                                          ContinuousOutputs, ExclusiveGroup, InPlaceStep, PlacedTensor,
                                          PlanAttributes, PlanObservation)
from zcspec.spec.observables.plan_contract import IoAttribute, PlannerAttributes, Provenance

jsonschema = pytest.importorskip("jsonschema")   # the test extra (>= 4.18)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "spec" / "plan_schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DOC = ROOT / "docs" / "plan-format.md"

# $defs entry -> the class the reader parses it into.
DEFS = {
    "tensor": PlacedTensor, "block": Block, "arena": Arena, "alignment": Alignment,
    "attributes_observation": PlanAttributes, "attributes_planner": PlannerAttributes, "io_attribute": IoAttribute,
    "continuous_group": ContinuousGroup, "continuous_outputs": ContinuousOutputs,
    "exclusive_group": ExclusiveGroup, "in_place_step": InPlaceStep, "byte_range": ByteRange, "byte_copy": ByteCopy,
}
# Keys the reader accepts inside an object and no claim reads (written by `zcspec plan --json`).
EXTRAS = {"tensor": {"batch"}, "block": {"parent"}}
TOP_EXTRAS = {f.name for f in attrs.fields(Provenance)}


def _errors(data) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in VALIDATOR.iter_errors(data)]


def _fields(cls) -> set[str]:
    return {f.name for f in attrs.fields(cls)}


def _required(cls) -> set[str]:
    return {f.name for f in attrs.fields(cls) if f.default is attrs.NOTHING}


def _classes_in(tp) -> set[type]:
    """The attrs classes a type hint holds, through unions, tuples and dicts."""
    if attrs.has(tp):
        return {tp}
    return set().union(*(_classes_in(a) for a in typing.get_args(tp))) if typing.get_args(tp) else set()


def _refs(node) -> set[str]:
    """Every $defs name a schema node refers to, however deep."""
    if isinstance(node, dict):
        own = {node["$ref"].removeprefix("#/$defs/")} if "$ref" in node else set()
        return own.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


# -- the schema itself ---------------------------------------------------------------------------

def test_the_schema_is_a_valid_draft_2020_12_schema_with_a_versioned_id():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"].endswith("zcspec-plan-1.json")
    assert SCHEMA["properties"]["format"] == {**SCHEMA["properties"]["format"], "const": "zcspec-plan"}
    assert SCHEMA["properties"]["version"]["const"] == 1


def test_the_top_level_keys_are_the_observation_fields_and_the_informational_keys():
    assert set(SCHEMA["properties"]) == _fields(PlanObservation) | TOP_EXTRAS
    assert set(SCHEMA["required"]) == _required(PlanObservation) == {"order", "tensors", "regions"}
    assert SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize("name", sorted(DEFS))
def test_each_object_has_exactly_its_class_fields_and_requires_those_without_default(name):
    node, cls = SCHEMA["$defs"][name], DEFS[name]
    assert set(node["properties"]) == _fields(cls) | EXTRAS.get(name, set())
    assert set(node.get("required", ())) == _required(cls)
    assert node["additionalProperties"] is False


def test_every_class_the_reader_can_build_has_its_schema_object_and_each_field_points_at_it():
    """Recursively from the plan (and the planner form of attributes): a nested class added to the
    observation without a $defs entry, or a field whose schema does not refer to its class, fails."""
    by_class = {cls: name for name, cls in DEFS.items()}
    seen, todo = set(), [(PlanObservation, SCHEMA), (PlannerAttributes, SCHEMA["$defs"]["attributes_planner"])]
    while todo:
        cls, node = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for field in attrs.fields(cls):
            for inner in _classes_in(hints[field.name]):
                assert inner in by_class, f"{cls.__name__}.{field.name}: no $defs entry for {inner.__name__}"
                assert by_class[inner] in _refs(node["properties"][field.name]), f"{cls.__name__}.{field.name}"
                todo.append((inner, SCHEMA["$defs"][by_class[inner]]))
    assert seen == {PlanObservation, *DEFS.values()}


def _properties(node, path=""):
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            yield f"{path}.{key}", sub
        for key, sub in node.items():
            yield from _properties(sub, f"{path}.{key}" if key != "properties" else path)


def test_every_property_says_what_it_means():
    missing = [path for path, sub in _properties(SCHEMA) if len(sub.get("description", "")) < 20]
    assert missing == []


def test_zcspec_schema_prints_the_shipped_schema(capsys):
    assert json.loads(plan_schema_text()) == SCHEMA
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMA


# -- what validates ------------------------------------------------------------------------------

def _doc_examples() -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)]


def test_the_documented_examples_validate_read_and_break_no_claim():
    """The minimal and the full example, with the counts the document prints for them."""
    examples = _doc_examples()
    assert len(examples) == 2
    for data, exercised in zip(examples, (7, 10)):
        assert _errors(data) == []
        report = check(plan_from_contract(data))
        assert report.violations == ()
        assert (len(report.applied), len(report.exercised), report.not_judged) == (14, exercised, {})


def test_the_documents_tables_name_every_key_of_the_schema():
    text = DOC.read_text(encoding="utf-8")
    keys = set(SCHEMA["properties"]).union(*(d["properties"] for d in SCHEMA["$defs"].values() if "properties" in d))
    assert sorted(k for k in keys if f"`{k}" not in text) == []


def test_the_minimal_examples_documented_mutations_break_the_claims_the_doc_names():
    minimal = _doc_examples()[0]
    late_c, short_b = copy.deepcopy(minimal), copy.deepcopy(minimal)
    late_c["tensors"][2]["first"] = 1
    short_b["tensors"][1]["last"] = 1
    assert set(check(plan_from_contract(late_c)).violated()) == {"LAYOUT-NO-OVERLAP", "LAYOUT-LOWER-BOUND"}
    assert "LAYOUT-LIFETIME-COVERS-USES" in check(plan_from_contract(short_b)).violated()


IMPORTED = [(case.label, p) for case in foreign_cases() for p in case.imported()]


@pytest.mark.parametrize("label, imported", IMPORTED, ids=[f"{label} {p.program}" for label, p in IMPORTED])
def test_every_kept_programs_import_output_validates(label, imported):
    assert _errors(json.loads(plan_file.to_json(imported))) == []


@pytest.mark.parametrize("model, strategy", [("zoo:squeezenet", "ge"), ("builtin:dynamic_batch", "ge"),
                                             ("builtin:workspace_streams", "compact"), ("builtin:collectives", "ge"),
                                             ("builtin:constants", "ge")])
def test_zcspec_plan_json_validates_and_reads(model, strategy):
    options = CompileOptions(soc="ascend910b", strategy=strategy, reuse=True)
    data = json.loads(json.dumps(plan_memory(run_passes(load(model), options), options.plan_options()).to_json()))
    assert _errors(data) == []
    plan_from_contract(data)


# -- what is refused, by the schema and the reader alike ------------------------------------------

def _minimal() -> dict:
    return _doc_examples()[0]


def _set(path: str, value):
    def edit(data):
        *head, last = path.split(".")
        for key in head:
            data = data[int(key)] if key.isdigit() else data[key]
        if value is _DELETE:
            del data[last]
        else:
            data[last] = value
    return edit


_DELETE = object()
MALFORMED = {
    "unknown top-level key": _set("comment", "hi"),
    "misspelt tensor key": _set("tensors.1.alais_of", "a"),
    "negative size": _set("tensors.0.size", -256),
    "offset past int64": _set("tensors.0.offset", 2**63),
    "region size past int64": _set("regions.scratch", 2**63),
    "missing required tensor key": _set("tensors.0.last", _DELETE),
    "missing regions": _set("regions", _DELETE),
    "offset as a string": _set("tensors.0.offset", "0"),
    "zero_copy as a number": _set("tensors.0.zero_copy", 0),
    "step as a boolean": _set("writes.a", [True]),
    "negative step": _set("consumers.a", [-1]),
    "unknown arena kind": _set("arenas.scratch.kind", "heap"),
    "arena alignment 0": _set("arenas.scratch.alignment", 0),
    "version 2": _set("version", 2),
    "another format": _set("format", "tflite"),
    "attributes mixing both forms": _set("attributes", {"memory_size": 0, "zero_copy_memory_size": 0,
                                                        "is_zero_copy_block": {}, "inputs": [], "outputs": []}),
    "negative stream": _set("streams", {"relu": -1}),
    "negative arena allocation step": _set("arena_allocations", {"scratch": [-1]}),
}


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_a_malformed_plan_is_refused_by_the_schema_and_by_the_reader(what):
    data = _minimal()
    assert _errors(data) == []
    MALFORMED[what](data)
    assert _errors(data) != []
    with pytest.raises(SpecError):
        plan_from_contract(data)
