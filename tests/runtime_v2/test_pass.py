"""ModelOutTensorZeroCopy and TrustOutTensor on hand-built execution graphs: before -> after."""
from __future__ import annotations

import pytest

from zcspec.impl.runtime.v2.errors import ExeGraphError
from zcspec.impl.runtime.v2.exe_graph import Edge, ExeGraph, ExeNode
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.passes import run_passes
from zcspec.impl.runtime.v2.passes.model_out_tensor_zero_copy import model_out_tensor_zero_copy
from zcspec.impl.runtime.v2.passes.trust_out_tensor import trust_out_tensor

AZC = LoweringOptions(always_zero_copy=True)


def N(name, type_, *inputs, outputs=1, after=(), **attrs):  # noqa: N802 - reads like a graph literal
    return ExeNode(name, type_, [Edge(*i.split(":")[:1], int(i.split(":")[1]) if ":" in i else 0) for i in inputs],
                   outputs, after, attrs)


def head(n_out=1):
    return [N("OutputData", "OutputData", outputs=n_out), N("alloc_sel", "SelectAllocator")]


def simple() -> ExeGraph:
    """alloc -> launch writes it -> Ensure(OutputData:0) -> FreeMemory."""
    return ExeGraph("simple", head() + [
        N("alloc/y", "AllocMemory", "alloc_sel", size=4032, raw=4000, tensor="y"),
        N("kernel/n", "LaunchKernel", "alloc/y", outputs=0, task=0),
        N("ensure/y", "EnsureTensorAtOutMemory", "alloc/y", "OutputData:0", outputs=0, after=["kernel/n"],
          output="y", index=0, nbytes=4000, infer_shape=("n",), node_outputs=("y",)),
        N("free/y", "FreeMemory", "alloc/y", outputs=0, after=["ensure/y"]),
    ]).validate()


def types(g: ExeGraph) -> list[tuple[str, str]]:
    return [(n.name, n.type) for n in g.nodes]


def test_default_rewrites_alloc_into_alloc_model_out_tensor():
    after = model_out_tensor_zero_copy(simple())
    node = after.node["alloc/y"]
    assert node.type == "AllocModelOutTensor"
    assert node.inputs == (Edge("alloc_sel"), Edge("OutputData", 0))
    assert node.attr("check_size") is True and node.attr("output") == "y" and node.attr("index") == 0
    # everything else, FreeMemory included, is unchanged and in place
    assert [n for n in after.nodes if n.name != "alloc/y"] == [n for n in simple().nodes if n.name != "alloc/y"]


def test_ge_compat_turns_the_size_check_off():
    node = model_out_tensor_zero_copy(simple(), LoweringOptions(ge_compat=True)).node["alloc/y"]
    assert node.type == "AllocModelOutTensor" and node.attr("check_size") is False


def test_always_zero_copy_rewrites_into_split_tensor_for_output_data():
    after = model_out_tensor_zero_copy(simple(), AZC)
    split = after.node["alloc/y"]
    assert split.type == "SplitTensorForOutputData" and split.inputs == (Edge("OutputData", 0),)
    assert "free/y" not in after.node                      # its guarding FreeMemory is removed
    assert "alloc_sel" not in after.node                   # the allocator chain is pruned (nothing else reads it)
    assert types(after)[:2] == [("OutputData", "OutputData"), ("alloc/y", "SplitTensorForOutputData")]  # hoisted
    assert after.node["ensure/y"].inputs[0] == Edge("alloc/y")  # Ensure stays (TrustOutTensor may remove it)


def test_allocator_kept_when_other_allocations_use_it():
    g = ExeGraph("two", head() + [
        N("alloc/t", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="t"),
        N("alloc/y", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="y"),
        N("kernel/n", "LaunchKernel", "alloc/t", "alloc/y", outputs=0),
        N("free/t", "FreeMemory", "alloc/t", outputs=0, after=["kernel/n"]),
        N("ensure/y", "EnsureTensorAtOutMemory", "alloc/y", "OutputData:0", outputs=0, output="y", index=0),
        N("free/y", "FreeMemory", "alloc/y", outputs=0, after=["ensure/y"]),
    ]).validate()
    after = model_out_tensor_zero_copy(g, AZC)
    assert "alloc_sel" in after.node and after.node["alloc/t"].type == "AllocMemory"
    assert "free/t" in after.node and "free/y" not in after.node


def test_output_that_feeds_another_node():
    """y is an output and also read by a later kernel: the alloc still becomes the output's memory."""
    g = ExeGraph("feeds", head() + [
        N("alloc/y", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="y"),
        N("kernel/p", "LaunchKernel", "alloc/y", outputs=0),
        N("alloc/z", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="z"),
        N("kernel/c", "LaunchKernel", "alloc/y", "alloc/z", outputs=0),
        N("free/z", "FreeMemory", "alloc/z", outputs=0, after=["kernel/c"]),
        N("ensure/y", "EnsureTensorAtOutMemory", "alloc/y", "OutputData:0", outputs=0, output="y", index=0),
        N("free/y", "FreeMemory", "alloc/y", outputs=0, after=["ensure/y"]),
    ]).validate()
    after = model_out_tensor_zero_copy(g)
    assert after.node["alloc/y"].type == "AllocModelOutTensor"
    assert after.node["kernel/c"].inputs[0] == Edge("alloc/y")  # the reader now reads the caller's buffer
    azc = model_out_tensor_zero_copy(g, AZC)
    assert azc.node["alloc/y"].type == "SplitTensorForOutputData" and azc.position["alloc/y"] == 1
    assert azc.node["kernel/c"].inputs[0] == Edge("alloc/y") and "free/y" not in azc.node


def test_identity_addr_is_looked_through():
    g = ExeGraph("reshape", head() + [
        N("alloc/t", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="t"),
        N("view/y", "IdentityAddr", "alloc/t", tensor="y"),
        N("kernel/n", "LaunchKernel", "alloc/t", outputs=0),
        N("ensure/y", "EnsureTensorAtOutMemory", "view/y", "OutputData:0", outputs=0, output="y", index=0),
        N("free/t", "FreeMemory", "alloc/t", outputs=0, after=["ensure/y"]),
    ]).validate()
    assert model_out_tensor_zero_copy(g).node["alloc/t"].type == "AllocModelOutTensor"


@pytest.mark.parametrize("producer", [
    N("view/y", "ViewAddr", "alloc/t", offset=512, size=400),      # a piece of a larger tensor
    N("view/y", "IdentityAddr", "in"),                               # the model input itself
])
def test_no_alloc_node_means_no_zero_copy(producer):
    g = ExeGraph("nozc", head() + [
        N("in", "SplitDataTensor"),
        N("alloc/t", "AllocMemory", "alloc_sel", size=1024, raw=912, tensor="t"),
        producer,
        N("ensure/y", "EnsureTensorAtOutMemory", "view/y", "OutputData:0", outputs=0, output="y", index=0),
        N("free/t", "FreeMemory", "alloc/t", outputs=0, after=["ensure/y"]),
    ]).validate()
    assert model_out_tensor_zero_copy(g) is g
    azc = model_out_tensor_zero_copy(g, AZC)
    assert azc.node["alloc/t"].type == "AllocMemory" and azc.node["ensure/y"] == g.node["ensure/y"]
    check = azc.nodes[1]    # the caller's buffer is still checked up front, right after OutputData
    assert (check.name, check.type, check.inputs) == ("check/y", "CheckOutputTensor", (Edge("OutputData", 0),))


def test_two_outputs_sharing_one_alloc_zero_copy_only_the_first():
    g = ExeGraph("shared", head(2) + [
        N("alloc/y", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="y"),
        N("view/z", "IdentityAddr", "alloc/y", tensor="z"),
        N("kernel/n", "LaunchKernel", "alloc/y", outputs=0),
        N("ensure/y", "EnsureTensorAtOutMemory", "alloc/y", "OutputData:0", outputs=0, output="y", index=0),
        N("ensure/z", "EnsureTensorAtOutMemory", "view/z", "OutputData:1", outputs=0, output="z", index=1),
        N("free/y", "FreeMemory", "alloc/y", outputs=0, after=["ensure/y", "ensure/z"]),
    ], ).validate()
    node = model_out_tensor_zero_copy(g).node["alloc/y"]
    assert node.type == "AllocModelOutTensor" and node.inputs[-1] == Edge("OutputData", 0) and node.attr("index") == 0


TRUST = LoweringOptions(trust_shape_on_out_tensor=True)


def test_trust_out_tensor_removes_the_ensure_that_repeats_split_tensor_for_output_data():
    azc = model_out_tensor_zero_copy(simple(), AZC)
    trusted = trust_out_tensor(azc, LoweringOptions(always_zero_copy=True, trust_shape_on_out_tensor=True))
    assert "ensure/y" not in trusted.node


def test_trust_out_tensor_gives_the_ensure_the_callers_shape_without_always_zero_copy():
    """GE's TrustOutTensor replaces the node's InferShape by OutputData whatever ModelOutTensorZeroCopy did:
    the Ensure after an AllocModelOutTensor stays (it may have to copy) and reads the caller's shape."""
    default = model_out_tensor_zero_copy(simple())
    trusted = trust_out_tensor(default, TRUST)
    assert trusted.node["ensure/y"] == default.node["ensure/y"].with_attrs(trust_shape=True)
    assert [n for n in trusted.nodes if n.name != "ensure/y"] == [n for n in default.nodes if n.name != "ensure/y"]


def _two_outputs(node_outputs) -> ExeGraph:
    """Node n writes y (a model output) and t; y's Ensure names n's outputs as ``node_outputs``."""
    return ExeGraph("two", head() + [
        N("alloc/y", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="y"),
        N("alloc/t", "AllocMemory", "alloc_sel", size=512, raw=400, tensor="t"),
        N("kernel/n", "LaunchKernel", "alloc/y", "alloc/t", outputs=0, task=0),
        N("ensure/y", "EnsureTensorAtOutMemory", "alloc/y", "OutputData:0", outputs=0, after=["kernel/n"],
          output="y", index=0, nbytes=400, infer_shape=("n",), node_outputs=node_outputs),
    ]).validate()


@pytest.mark.parametrize("options", [TRUST, LoweringOptions(trust_shape_on_out_tensor=True, always_zero_copy=True)],
                         ids=["trust", "trust+azc"])
def test_trust_out_tensor_keeps_the_model_shape_when_the_node_has_an_output_no_ensure_delivers(options):
    """GE's CanBeDeleted: an InferShape with an output that is not a model output stays, so the Ensure of
    its other output keeps the model's shape and, fed by SplitTensorForOutputData, is not removed."""
    g = model_out_tensor_zero_copy(_two_outputs(("t", "y")), options)
    assert trust_out_tensor(g, options) is g
    g = model_out_tensor_zero_copy(_two_outputs(("y",)), options)
    assert trust_out_tensor(g, options) is not g


def test_trust_out_tensor_keeps_the_model_shape_of_an_output_no_node_computes():
    """A model input or weight passed through has no InferShape in GE: nothing to replace."""
    g = ExeGraph("through", head() + [
        N("const/w", "ConstTensorData", region="weight", offset=0, size=512),
        N("ensure/y", "EnsureTensorAtOutMemory", "const/w", "OutputData:0", outputs=0, output="y", index=0,
          nbytes=400, infer_shape=(), node_outputs=()),
    ]).validate()
    assert trust_out_tensor(g, TRUST) is g


def test_pipeline_switches():
    g = simple()
    assert run_passes(g, LoweringOptions(zero_copy=False)) is g
    both = run_passes(g, LoweringOptions(always_zero_copy=True, trust_shape_on_out_tensor=True))
    assert [n.type for n in both.nodes] == ["OutputData", "SplitTensorForOutputData", "LaunchKernel"]


def test_pass_is_pure():
    g = simple()
    before = g.dump()
    model_out_tensor_zero_copy(g, AZC)
    assert g.dump() == before


@pytest.mark.parametrize("nodes, culprit", [
    ([N("a", "LaunchKernel", "b:0", outputs=0), N("b", "AllocMemory")], "a"),            # forward edge
    ([N("b", "AllocMemory"), N("a", "LaunchKernel", "b:1", outputs=0)], "a"),            # no such output
    ([N("b", "AllocMemory"), N("b", "AllocMemory")], "b"),                               # duplicate
    ([N("a", "FreeMemory", outputs=0, after=["zz"])], "a"),                               # dangling control edge
])
def test_malformed_graph_is_rejected_naming_the_node(nodes, culprit):
    with pytest.raises(ExeGraphError) as e:
        ExeGraph("bad", nodes).validate()
    assert e.value.node == culprit and culprit in str(e.value)
