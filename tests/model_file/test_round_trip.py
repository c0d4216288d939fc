"""compile -> bytes -> load gives the identical artefacts (plan, tasks, offset table) for the light models."""
import pytest

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_round_trip(name):
    m = build_model(load_graph(f"zoo:{name}"), CompileOptions(soc="ascend310p"))
    back = load_model(encode(m))
    assert back.plan == m.plan and back.tasks == m.tasks and back.tasks.zero_copy == m.tasks.zero_copy
    assert back == m
    assert len(m.tasks.zero_copy) >= 2, "the input and the output are referenced by some task"
