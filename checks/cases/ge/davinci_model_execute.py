"""GE's ``tests/ge/st/testcase/test_davinci_model_execute.cc`` (DavinciModelTest), ported: the two tests of
models sharing their session's feature-map memory under the extend-size static memory policy.

GE loads its sample model (``BuildGraphNode``: ``BuildSampleGraph`` of test_ge_executor.cc, with
StreamSwitch, StreamMerge, variables and AIPP) several times through ``ModelExecutor::LoadGraph`` with
``ge.exec.staticMemoryPolicy`` "2", then reads ``ModelManager``'s models and their ``mem_base_``. Its
facts do not depend on the graph, only on the model's memory sizes (``ATTR_MODEL_MEMORY_SIZE``,
``ATTR_MODEL_ZERO_COPY_MEMORY_SIZE``), so the graph here is a chain of element-wise kernels, loaded by
runtime v1 into one ``Session("2")`` (``LoadOptions.session``: ``DavinciModel::MallocFeatureMapMem``
takes the feature map from the session's ``ActiveMemoryAllocator``). GE's "memory size + 64" for a
model larger than the first ones is one more kernel here: one more 512-byte feature-map block, the
smallest step zcspec's plans grow by. ``mem_base_`` is the model's feature-map base. The other TEST_Fs
(queues, dump, profiling, no-tiling tensors, FileConstant weights, SPMD deploys...) are rows in
DAVINCI_EXECUTE_CASES.md.
"""
from __future__ import annotations

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.v1 import load, LoadOptions, Session

EXTEND_SIZE = "2"   # STATIC_MEMORY_POLICY = kExtendSizeType, as both tests set it


def _sample_model(kernels: int):
    """x (float {4}) -> Neg -> Relu -> Neg ... (``kernels`` ops) -> NetOutput."""
    b = GraphBuilder(f"sample_{kernels}")
    h = b.input("x", (4,))
    for i in range(kernels):
        h = b.op("Relu" if i % 2 else "Neg", [h], name=f"op{i}")
    b.output(h)
    return build_model(b.build())


@ge_case("test_davinci_model_execute.cc")
def load_model_with_extending_static_memory():
    """test_davinci_model_execute.cc TEST_F(DavinciModelTest, load_model_with_extending_static_memory): policy
    "2"; model 1 loads, model 2 (the same, with reuseZeroCopyMemory=1) loads into the same memory base, model
    3 (memory size + 64) loads while both are still loaded; GE expects every load and unload to succeed, two
    and then three models loaded, and models 1 and 2 to have one ``mem_base_``."""
    session = Session(EXTEND_SIZE)
    small, large = _sample_model(2), _sample_model(3)
    fact(large.regions["feature_map"] > small.regions["feature_map"], "model 3 needs more memory than model 1")
    dev = Device(small.soc)
    m1 = load(dev, small, LoadOptions(session=session))
    m2 = load(dev, small, LoadOptions(session=session, reuse_zero_copy_memory=1))
    loaded = [m1, m2]
    expect(m2.base("feature_map"), m1.base("feature_map"), "model 2's mem_base_ (model 1's)")
    loaded.append(load(dev, large, LoadOptions(session=session)))
    expect(sum(not lm.unloaded for lm in loaded), 3, "the models loaded")
    for lm in loaded:
        lm.unload()
    fact(all(lm.unloaded for lm in loaded), "every model unloaded")


@ge_case("test_davinci_model_execute.cc")
def load_model_with_no_extending_static_memory():
    """test_davinci_model_execute.cc TEST_F(DavinciModelTest, load_model_with_no_extending_static_memory): policy
    "2" with reuseZeroCopyMemory=1 and a zero-copy memory size of 128 (the I/O region is not in the session's
    memory); GE expects both loads and unloads to succeed, two models loaded, and one ``mem_base_``."""
    opts = LoadOptions(session=Session(EXTEND_SIZE), reuse_zero_copy_memory=1)
    model = _sample_model(2)
    fact(model.zero_copy_size > 0, "the model has a zero-copy region")
    dev = Device(model.soc)
    loaded = [load(dev, model, opts), load(dev, model, opts)]
    expect(sum(not lm.unloaded for lm in loaded), 2, "the models loaded")
    expect(loaded[1].base("feature_map"), loaded[0].base("feature_map"), "model 2's mem_base_ (model 1's)")
    for lm in loaded:
        lm.unload()
    fact(all(lm.unloaded for lm in loaded), "every model unloaded")
