"""One home per rule (docs/architecture.md, "Where each rule lives"): each rule has one definition in impl/ and
checks/, and these tests fail when a second copy appears.

A copy is recognised by its shape in the syntax tree, not by its name: a loop that follows ``alias_of``,
arithmetic on ``size_padding``, the light models' names written out, a definition of the trace mapping or
of the I/O names, a ``to_dict``/``from_dict`` pair on an options class. spec/ is left out on purpose: the
spec recomputes what it checks independently. checks/proofs/ reads plan JSON from any tool, so its own
reader of ``alias_of`` chains is the independent side as well.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEPENDENT = ("checks/proofs/",)


def _modules(*tops: str):
    for top in tops:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith(INDEPENDENT):
                yield rel, ast.parse(path.read_text(encoding="utf-8"), rel)


def _where(predicate, *tops: str) -> set[str]:
    return {rel for rel, tree in _modules(*tops) if any(predicate(n) for n in ast.walk(tree))}


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, (ast.Attribute, ast.Name, ast.Constant)) and name in (
        getattr(n, "attr", None), getattr(n, "id", None), getattr(n, "value", None)) for n in ast.walk(node))


def _defines(name: str):
    return lambda n: isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name


def test_the_alias_root_of_a_plan_tensor_is_followed_in_one_place():
    walks = _where(lambda n: isinstance(n, ast.While) and _mentions(n.test, "alias_of"), "impl", "checks")
    assert walks == {"impl/compiler/memory/plan_types.py"}, "call MemoryPlan.root instead"


def test_the_ge_tensor_size_is_computed_in_one_place():
    arithmetic = _where(lambda n: isinstance(n, ast.BinOp) and _mentions(n, "size_padding"), "impl", "checks")
    assert arithmetic == {"impl/compiler/memory/sizes.py"}, "call memory.sizes.tensor_size instead"


def test_the_lower_bound_has_one_home_per_level():
    """The plan's bound (batch branches exclusive) and the packing problem's bound; nothing else."""
    homes = _where(_defines("lower_bound"), "impl")
    assert homes == {"impl/compiler/memory/bounds.py", "impl/compiler/memory/packing/bound.py"}


def test_the_light_models_are_listed_once():
    lists = _where(lambda n: isinstance(n, ast.Constant) and n.value == "bvlc_alexnet", "impl", "checks", "benchmarks")
    assert lists == {"checks/zoo.py"}, "import zcspec.checks.zoo.LIGHT instead"


def test_io_names_and_the_trace_mapping_have_one_definition():
    assert _where(_defines("io_names"), "impl", "checks") == {"impl/runtime/io_names.py"}
    assert _where(_defines("spec_events"), "impl", "checks") == {"impl/device/trace_events.py"}


def test_options_and_plans_are_serialised_by_the_artefact_codec_only():
    def hand_codec(n):
        return (isinstance(n, ast.ClassDef) and (n.name.endswith("Options") or n.name == "MemoryPlan")
                and any(_defines(m)(f) for f in n.body for m in ("to_dict", "from_dict", "to_contract")))
    assert _where(hand_codec, "impl", "checks") == set()


def test_which_tensors_share_memory_is_decided_in_one_place():
    """Views and in-place outputs become symbols in the alias analysis only; passes and the planner read it."""
    def decides(n):
        return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("view_offsets", "ref_outputs"))
    assert _where(decides, "impl", "checks") == {"impl/compiler/aliases.py"}, "use zcspec.impl.compiler.aliases"


def test_sub_byte_packing_has_one_home():
    """Sub-byte tensors are packed and unpacked by impl/platform/storage.py only (device, buffers, weights)."""
    def packs(n):
        return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("packbits", "unpackbits"))
    assert _where(packs, "impl", "checks") == {"impl/platform/storage.py"}, "use zcspec.impl.platform.storage"


def test_a_nodes_place_on_its_stream_is_decided_in_one_place():
    """The planner's clocks and task generation's waits read one rule for where a node without a task holds
    its stream (a stream edge lands on it): a second copy would let the planner count an order no runtime
    waits for."""
    assert _where(_defines("takes_place"), "impl", "checks") == {"impl/compiler/memory/stream_order.py"}
    callers = _where(lambda n: isinstance(n, ast.Attribute) and n.attr == "takes_place", "impl", "checks")
    assert callers == {"impl/compiler/memory/unit_facts.py", "impl/compiler/tasks/stream_waits.py"}
