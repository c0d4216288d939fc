"""MF-SLOT-BYTES: every argument slot of a built model file spans its tensor's raw bytes, by the spec's own
element widths. Planted: the compiler's dtype table gives a 4-bit type three bits (the mutation sample's
dtypes.py:50 did so to float4e2m1; only the output oracle saw it). A 12-element tensor of it is then 5 raw
bytes instead of 6, and still 64 bytes padded: the plan's sizes (LAYOUT-TENSOR-SIZE) cannot tell, the
slot's byte count can."""
from __future__ import annotations

import attrs
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform import dtypes
from zcspec.spec.observables.model_file import FileEdit
from zcspec.spec.registry import get

CLAIM = get("MF-SLOT-BYTES")


def _observed(dtype: str, shape=(3, 4)):
    b = GraphBuilder(f"cast_{dtype}")
    x = b.input("x", shape)
    b.output(b.op("Cast", [b.op("Cast", [x], dtype=dtype, to=dtype)], dtype="float32", to="float32"))
    graph = b.build()
    options = CompileOptions(soc="ascend910b")
    stages = compile_stages(graph, options)
    return observe_model_file(encode(stages.model), stages.graph, options)


@pytest.mark.parametrize("dtype", ["uint4", "int4", "float4e2m1", "float16", "int2"])
def test_the_slots_of_a_built_file_span_their_tensors_raw_bytes(dtype):
    obs = _observed(dtype)
    assert CLAIM.exercised(obs) and CLAIM.violations(obs) == ()
    assert any(s.size == obs.tensor_bytes[s.tensor] and s.tensor != "x" for t in obs.tasks for s in t.slots
               if s.tensor in obs.tensor_bytes)


@pytest.mark.parametrize("dtype", ["uint4", "float4e2m1"])
def test_a_sub_byte_width_the_compiler_got_wrong_shows_in_the_slots(dtype, monkeypatch):
    monkeypatch.setitem(dtypes.DTYPES, dtype, attrs.evolve(dtypes.DTYPES[dtype], bits=3))
    obs = _observed(dtype)
    messages = [v.message for v in CLAIM.violations(obs)]
    assert messages and all("make 6 raw bytes" in m and "spans 5 bytes" in m for m in messages)


def test_an_edited_file_is_left_to_mf_determined():
    obs = attrs.evolve(_observed("uint4"), edit=None)
    assert CLAIM.exercised(obs)
    assert not CLAIM.exercised(attrs.evolve(obs, edit=FileEdit(("tasks",), True)))
