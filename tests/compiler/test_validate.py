"""Validation: each rule gives an error naming its culprit; well-formed graphs pass unchanged."""
import attrs
import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.errors import (
    CycleError,
    DuplicateNameError,
    GraphError,
    MissingTensorError,
    ShapeError,
    UnsupportedOpError,
)
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.compiler.validate import validate
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.errors import SizeOverflowError, UnknownDTypeError


def chain() -> Graph:
    b = GraphBuilder("chain")
    x = b.input("x", (1, 4))
    y = b.op("Relu", [x], name="relu")
    z = b.op("Add", [y, b.weight("w", np.ones((1, 4), np.float32))], name="add")
    b.output(z)
    return b.build()


def replace_node(graph: Graph, which: str, **changes) -> Graph:
    return attrs.evolve(graph, nodes=[attrs.evolve(n, **changes) if n.name == which else n for n in graph.nodes])


def replace_desc(graph: Graph, name: str, **changes) -> Graph:
    return attrs.evolve(graph, tensors=[attrs.evolve(t, **changes) if t.name == name else t for t in graph.tensors])


def test_well_formed_graph_passes_unchanged():
    g = chain()
    assert validate(g) is g
    assert execution_order(g) == ("x", "relu", "add", "NetOutput")


def test_cycle_names_its_nodes():
    g = replace_node(chain(), "relu", inputs=("add:0",))
    with pytest.raises(CycleError) as e:
        validate(g)
    assert set(e.value.cycle) == {"relu", "add"}
    assert "'relu'" in str(e.value) and "'add'" in str(e.value)


def test_missing_tensor_names_node_and_tensor():
    g = replace_node(chain(), "add", inputs=("relu:0", "nowhere"))
    with pytest.raises(MissingTensorError) as e:
        validate(g)
    assert (e.value.node, e.value.tensor) == ("add", "nowhere")


def test_tensor_without_desc():
    g = attrs.evolve(chain(), tensors=[t for t in chain().tensors if t.name != "relu:0"])
    with pytest.raises(GraphError, match="'relu:0'.*no TensorDesc"):
        validate(g)


@pytest.mark.parametrize("what", ["node", "tensor", "written twice"])
def test_duplicate_names(what):
    g = chain()
    if what == "node":
        g = replace_node(g, "add", name="relu")
        err = DuplicateNameError
    elif what == "tensor":
        g = attrs.evolve(g, tensors=g.tensors + (TensorDesc("x", (1,)),))
        err = DuplicateNameError
    else:
        g = replace_node(g, "add", outputs=("relu:0",))
        err = GraphError
    with pytest.raises(err, match="relu|'x'"):
        validate(g)


def test_unknown_dtype_names_tensor():
    with pytest.raises(UnknownDTypeError) as e:
        validate(replace_desc(chain(), "relu:0", dtype="float13"))
    assert e.value.tensor == "relu:0" and "float13" in str(e.value)


def test_string_dtype_has_no_static_size():
    with pytest.raises(UnknownDTypeError):
        dtypes.get("string")


@pytest.mark.parametrize("shape, fragment", [((1, "N"), "dynamic"), ((1, None), "dynamic"), ((-1,), "negative"), ((2, -3), "negative")])
def test_bad_dimensions(shape, fragment):
    with pytest.raises(ShapeError, match=fragment) as e:
        validate(replace_desc(chain(), "relu:0", shape=shape))
    assert e.value.tensor == "relu:0"


def test_dynamic_dimension_error_suggests_the_fix():
    with pytest.raises(ShapeError, match="--shape"):
        validate(replace_desc(chain(), "x", shape=(1, "batch")))


def test_size_overflow():
    with pytest.raises(SizeOverflowError) as e:
        validate(replace_desc(chain(), "relu:0", shape=(2**31, 2**31, 4)))
    assert e.value.tensor == "relu:0"


def test_unsupported_op():
    with pytest.raises(UnsupportedOpError) as e:
        validate(replace_node(chain(), "relu", op_type="FancyOp"))
    assert e.value.node == "relu" and "FancyOp" in str(e.value)


def test_arity():
    with pytest.raises(GraphError, match="'add' \\(Add\\) has 1 inputs, expects 2"):
        validate(replace_node(chain(), "add", inputs=("relu:0",)))


def test_one_netoutput_required():
    g = attrs.evolve(chain(), nodes=[n for n in chain().nodes if n.op_type != "NetOutput"])
    with pytest.raises(GraphError, match="exactly one NetOutput"):
        validate(g)


def test_weight_size_must_match_desc():
    g = replace_desc(chain(), "w", shape=(1, 5))
    # The builder stored a uniform fill as one element (splat), which still fits any shape;
    # a non-uniform weight must match exactly.
    validate(g)
    b = GraphBuilder("w")
    x = b.input("x", (2,))
    b.output(b.op("Add", [x, b.weight("w", np.array([1.0, 2.0], np.float32))]))
    with pytest.raises(GraphError, match="weight 'w' holds 8 bytes"):
        validate(replace_desc(b.build(), "w", shape=(3,)))


def test_order_is_stable_by_insertion():
    b = GraphBuilder("diamond")
    x = b.input("x", (4,))
    left = b.op("Relu", [x], name="left")
    right = b.op("Neg", [x], name="right")
    b.output(b.op("Add", [left, right], name="join"))
    g = b.build()
    assert execution_order(g) == ("x", "left", "right", "join", "NetOutput")
    swapped = attrs.evolve(g, nodes=[g.node[n] for n in ("x", "right", "left", "join", "NetOutput")])
    assert execution_order(swapped) == ("x", "right", "left", "join", "NetOutput")


@pytest.mark.parametrize(
    "shape, dtype, size",
    [((2, 3), "float32", 24), ((3,), "float16", 6), ((3,), "bfloat16", 6), ((5,), "bool", 5), ((3,), "int4", 2),
     ((4,), "uint2", 1), ((2,), "complex128", 32), ((), "int64", 8), ((3,), "float6e2m3", 3)],
)
def test_byte_sizes(shape, dtype, size):
    assert dtypes.nbytes(shape, dtype) == size


def test_every_onnx_type_but_string_has_a_size():
    import onnx

    for name, value in onnx.TensorProto.DataType.items():
        if name in ("UNDEFINED", "STRING"):
            continue
        d = dtypes.from_onnx(value)
        assert d.bits > 0
        assert dtypes.numpy_dtype(d.name).itemsize * 8 >= d.bits or d.bits < 8


def test_node_attrs_are_frozen_and_typed():
    n = Node("n", "Relu", ["a"], ["b"], {"k": [1, 2], "f": np.float32(0.5)})
    assert n.attr("k") == (1, 2) and isinstance(n.attr("f"), float)
    with pytest.raises(GraphError, match="'n' attribute 'bad'"):
        Node("n", "Relu", ["a"], ["b"], {"bad": {"x": 1}})
