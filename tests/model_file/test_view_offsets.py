"""Views at relative offsets inside a model input: the planner places them, the table records them."""
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions


def model(graph, **opts):
    return build_model(graph, CompileOptions(**opts))


def test_split_of_an_input_is_refreshed_at_relative_offsets():
    b = GraphBuilder("s")
    x = b.input("x", (4, 2))
    top, rest = b.op("Split", [x], name="split", outputs=[((1, 2), "float32"), ((3, 2), "float32")], axis=0, split=(1, 3))
    b.output(b.op("Relu", [top], name="r1"), b.op("Neg", [rest], name="r2"))
    m = model(b.build())
    refs = {(m.tasks.tasks[z.task].node, z.role, z.index, z.relative_offset) for z in m.tasks.zero_copy}
    assert ("r1", "input", 0, 0) in refs and ("r2", "input", 0, 8) in refs
    assert ("r1", "output", 0, 0) in refs and ("r2", "output", 1, 0) in refs
