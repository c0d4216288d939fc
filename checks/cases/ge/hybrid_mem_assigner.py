"""GE's ``tests/ge/ut/ge/graph/build/hybrid_mem_assigner_unittest.cc`` (UtestHybridMemAssigner), ported.

That file checks ``ProcessInplace`` (compiler/graph/build/memory/mem_inplace.cc): which
optional in-place pairs (``_output_inplace_ability``) become real refs, seen as merged
symbols and the ReuseInput flag. zcspec's counterpart is the node attribute
``_inplace_ability`` on an in-place op (the pairs flattened: ``(0, 0, 0, 1)`` is (0, 0), (0, 1)), kept
under ProcessInplace's conditions (equal raw sizes, the last consumer of the input's producer node; a
pair naming no input is ignored); a merged symbol shows as the output's ``alias_of`` in the plan.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, GeMismatch
from zcspec.checks.cases.ge.graph import GeGraph


SIZE = 1 * 1 * 224 * 224 * 4  # the graph DSL's default tensor


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_input_data_invalid():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_input_data_invalid)
    (SimpleFooGraph): input (RefData) -> foo (in-place ability (0, 0)) -> NetOutput; a graph input is
    read-only, so GE keeps two symbols (4 anchors, 2 symbols): foo's output is not its input's."""
    g = GeGraph("foo", dsl=True)
    g.node("input", op="Data", outs=(SIZE,)).node("foo", op="Relu", outs=(SIZE,), _inplace_ability=(0, 0))
    g.node("NetOutput", op="NetOutput", outs=())
    g.chain("input", "foo", "NetOutput")
    fact(g.plan().tensor("foo:0").alias_of is None, 'g.plan().tensor("foo:0").alias_of is None')


def _condition_calc_graph(out_size, ability=(0, 0)):
    """BuildAddConditionCalcGraph: data0, data1 -> add1 -> condition_calc (in-place ability (0, 0)) -> NetOutput."""
    g = GeGraph("condition_calc", dsl=True)
    g.node("data0", op="Data", outs=(SIZE,)).node("add1", op="Add", outs=(SIZE,))
    g.node("condition_calc", op="Relu", outs=(out_size,), _inplace_ability=ability)
    g.node("NetOutput", op="NetOutput", outs=()).node("data1", op="Data", outs=(SIZE,))
    g.chain("data0", "add1", "condition_calc", "NetOutput")
    g.link("data1", "add1", 0, 1)
    return g


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_one_input_Success():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_one_input_Success):
    condition_calc, the last reader of add1's output, becomes in-place: one symbol fewer, ReuseInput set
    with index 0, condition_calc's output in add1's symbol."""
    plan = _condition_calc_graph(SIZE).plan()
    expect(plan.tensor("condition_calc:0").alias_of, "add1:0", 'plan.tensor("condition_calc:0").alias_of')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_invalid_tensor_size():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_invalid_tensor_size):
    condition_calc's output reshaped to {1, 2, 3} ND; GE expects the symbol count unchanged (no in-place)."""
    fact(_condition_calc_graph(1 * 2 * 3 * 4).plan().tensor("condition_calc:0").alias_of is None,
         '_condition_calc_graph(1 * 2 * 3 * 4).plan().tensor("condition_calc:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_three_add_nodes_Success():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_three_add_nodes_Success)
    (BuildThreeAddNodeGraph): data1, data2 -> add1 -> add2 input 1; data1 -> add3 -> add2 input 0;
    add2 -> NetOutput, add2 with in-place ability (0, 0), (0, 1). GE merges add2's output into add3's
    symbol (ReuseInputIndex 0, the first pair that survives)."""
    g = GeGraph("three_add", dsl=True)
    g.node("data1", op="Data", outs=(SIZE,)).node("data2", op="Data", outs=(SIZE,))
    g.node("add1", op="Add", outs=(SIZE,)).node("add2", op="Add", outs=(SIZE,), _inplace_ability=(0, 0, 0, 1))
    g.node("add3", outs=(SIZE,)).node("NetOutput", op="NetOutput", outs=())
    g.link("data1", "add1").link("add1", "add2", 0, 1).link("add2", "NetOutput")
    g.link("data2", "add1", 0, 1)
    g.link("data1", "add3", 0, 0).link("add3", "add2", 0, 0)
    expect(g.plan().tensor("add2:0").alias_of, "add3:0", 'g.plan().tensor("add2:0").alias_of')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_can_not_inplace():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_can_not_inplace)
    (BuildStaticMinimumGradAndAddGraph): data0, data1, data2 -> mg (2 outputs); mg:0 -> NetOutput;
    mg:1, data2 -> add0 (in-place ability (0, 0), (0, 1)) -> NetOutput. GE expects no ReuseInput on add0.
    The (0, 1) pair (data2, a graph input) is refused too."""
    g = GeGraph("minimum_grad_add", dsl=True)
    for name in ("data0", "data1", "data2"):
        g.node(name, op="Data", outs=(SIZE,))
    g.node("mg", op="LSTM", outs=(SIZE, SIZE)).node("add0", op="Add", outs=(SIZE,), _inplace_ability=(0, 0, 0, 1))
    g.node("NetOutput", op="NetOutput", outs=())
    g.chain("data0", "mg", "NetOutput")
    g.chain("data1", "mg")
    g.chain("data2", "mg")
    g.link("mg", "add0", 1, 0).link("add0", "NetOutput")
    g.link("data2", "add0", 0, 1)
    fact(g.plan().tensor("add0:0").alias_of is None, 'g.plan().tensor("add0:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_input_include_var():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_input_include_var)
    (BuildVarConnectToSplit): var -> split (in-place ability (0, 0)) -> add_2; a Variable's symbol is
    read-only, so GE sets no ReuseInput. Simplified: GE's split has two outputs and NoPadding continuous
    outputs (each also refuses in-place); here it is a one-output in-place op reading the variable."""
    g = GeGraph("var_split", dsl=True)
    g.node("var", op="Variable", outs=(SIZE,)).node("split", op="Relu", outs=(SIZE,), _inplace_ability=(0, 0))
    g.node("add_2", outs=(SIZE,))
    g.chain("var", "split", "add_2")
    fact(g.plan().tensor("split:0").alias_of is None, 'g.plan().tensor("split:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_one_invalid_input_index():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_one_invalid_input_index):
    as ProcessInplace_one_input_Success, condition_calc with in-place ability (0, 1) on its one input: the
    pair names no input and is ignored (symbol count unchanged)."""
    fact(_condition_calc_graph(SIZE, ability=(0, 1)).plan().tensor("condition_calc:0").alias_of is None,
         '_condition_calc_graph(SIZE, ability=(0, 1)).plan().tensor("condition_calc:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_two_nodes_Success():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_two_nodes_Success):
    data1, data2 -> add1; data1 -> add2 input 0, add1 -> add2 input 1; add2 (in-place ability (0, 0),
    (0, 1)) -> NetOutput. Input 0 is a Data (read-only), so GE takes the (0, 1) pair: add2's output in
    add1's symbol, ReuseInputIndex 1."""
    g = GeGraph("two_nodes", dsl=True)
    g.node("data1", op="Data", outs=(SIZE,)).node("data2", op="Data", outs=(SIZE,))
    g.node("add1", op="Add", outs=(SIZE,)).node("add2", op="Add", outs=(SIZE,), _inplace_ability=(0, 0, 0, 1))
    g.node("NetOutput", op="NetOutput", outs=())
    g.link("data1", "add1").link("data2", "add1", 0, 1)
    g.link("data1", "add2", 0, 0).link("add1", "add2", 0, 1).link("add2", "NetOutput")
    expect(g.plan().tensor("add2:0").alias_of, "add1:0", 'g.plan().tensor("add2:0").alias_of')


def _switch_chain(ref: str):
    """MemConflictShareGraph::BuildUserInAndNotSupportRefreshOutByRefGraph2: data -> swt1 -> swt2 -> a ->
    netoutput, swt2 with the in-place ability (0, 0) and ``ref`` with a mandatory ref (SetOutReuseInput).
    GE's swt nodes are StreamSwitch; zcspec has no such op, and the facts asserted are about the in-place
    decisions only, so they are Relu here."""
    g = GeGraph("switch_chain", dsl=True)
    g.node("data", op="Data", outs=(SIZE,))
    for name in ("swt1", "swt2"):
        extra = {"_inplace_ability": (0, 0)} if name == "swt2" else {}
        if name == ref:
            extra["_reuse_input"] = True
        g.node(name, op="Relu", outs=(SIZE,), **extra)
    g.node("a", op="Relu", outs=(SIZE,)).node("netoutput", op="NetOutput", outs=())
    g.chain("data", "swt1", "swt2", "a", "netoutput")
    return g


@ge_case("hybrid_mem_assigner_unittest.cc", row="P9", raises=GeMismatch, reason=(
    "GE: swt1's mandatory ref puts its output on the Data (graph_utils.cc IsRefFromInput), so swt2's optional "
    "in-place on it would write the user's input and ProcessInplace refuses it; zcspec gives swt1 its own "
    "memory (row P9), so swt2 is in place on it"))
def ProcessInplace_two_nodes_not_inplace():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_two_nodes_not_inplace):
    swt1 refs the Data; swt2's in-place ability (0, 0) on swt1's output is refused (no ReuseInput)."""
    fact(_switch_chain(ref="swt1").plan().tensor("swt2:0").alias_of is None,
         '_switch_chain(ref="swt1").plan().tensor("swt2:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_two_nodes_not_break_reuse():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_two_nodes_not_break_reuse):
    swt2 has a mandatory ref on swt1's output as well as the in-place ability; the ref survives ProcessInplace."""
    expect(_switch_chain(ref="swt2").plan().tensor("swt2:0").alias_of, "swt1:0",
           '_switch_chain(ref="swt2").plan().tensor("swt2:0").alias_of')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_continous_output_not_inplace():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_continous_output_not_inplace):
    the graph of ProcessInplace_one_input_Success with ATTR_NAME_CONTINUOUS_OUTPUT on condition_calc (one
    output); GE expects no ReuseInput: ``mem_inplace.cc`` ``RemoveOutRwConflicts`` drops every in-place pair
    of a node carrying the attribute, whatever its output count."""
    g = _condition_calc_graph(SIZE)
    g._nodes["condition_calc"]["attrs"]["continuous_output"] = True
    fact(g.plan().tensor("condition_calc:0").alias_of is None, 'g.plan().tensor("condition_calc:0").alias_of is None')


@ge_case("hybrid_mem_assigner_unittest.cc")
def ProcessInplace_two_nodes_continous_output():
    """hybrid_mem_assigner_unittest.cc TEST_F(UtestHybridMemAssigner, ProcessInplace_two_nodes_continous_output)
    (MemConflictShareGraph::BuildContinuousOutGraph): split1 -> split2 -> a (Cast, in-place ability (0, 0)) ->
    netoutput, split2 -> b -> netoutput, split1 -> c -> netoutput, split1 and split2 with continuous outputs;
    GE expects a not in place: ``mem_inplace.cc`` ``RemoveSymbolConflicts`` refuses a merge that would put a
    graph output (a:0) into the symbol of a continuous output (split2:0)."""
    g = GeGraph("continuous_out", dsl=True)
    g.node("split1", op="Split", outs=(SIZE, SIZE), continuous_output=True)
    g.node("split2", op="Split", outs=(SIZE, SIZE), continuous_output=True)
    g.node("a", op="Cast", outs=(SIZE,), _inplace_ability=(0, 0))
    g.node("b", op="Relu", outs=(SIZE,)).node("c", op="Relu", outs=(SIZE,))
    g.node("netoutput", op="NetOutput", outs=())
    g.chain("split1", "split2").chain("split1", "c", "netoutput")
    g.chain("split2", "a", "netoutput").chain("split2", "b", "netoutput")
    plan = g.plan()
    fact(plan.tensor("a:0").alias_of is None, 'plan.tensor("a:0").alias_of is None')
    expect(plan.tensor("split2:0").block, plan.tensor("split2:1").block,
           'plan.tensor("split2:0").block')   # the continuous output stays one block
