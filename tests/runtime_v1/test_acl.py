"""The ACL-style facade: load from memory (own or caller memory), config handle, datasets, execute, unload."""
import numpy as np
import pytest

from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.runtime.acl import (
    ACL_MDL_MEM_ADDR_PTR, ACL_MDL_WORKSPACE_MEM_OPTIMIZE, ZCSPEC_ZERO_COPY, Acl,
)
from zcspec.impl.runtime.v1 import InvalidParam, ModelUnloadedError, ParamInvalid
from tests.helpers.runtime_v1 import device, expected, mlp


def datasets(acl, dev, x, host=False):
    ins, outs = acl.create_dataset(), acl.create_dataset()
    if host:
        xp = dev.host_malloc(24)
        dev.host_write(xp, x)
    else:
        xp = acl.rt_malloc(24)
        hp = dev.host_malloc(24)
        dev.host_write(hp, x)
        acl.rt_memcpy(xp, 24, hp, 24, "ACL_MEMCPY_HOST_TO_DEVICE")
    acl.add_dataset_buffer(ins, acl.create_data_buffer(xp, 24))
    out_ptrs = [acl.rt_malloc(24) for _ in range(2)]
    for p in out_ptrs:
        acl.add_dataset_buffer(outs, acl.create_data_buffer(p, 24))
    return ins, outs, out_ptrs


def test_load_execute_unload_with_own_and_caller_memory():
    m = mlp()
    data = encode(m)
    dev = device()
    acl = Acl(dev)
    work, weight = acl.mdl_query_size_from_mem(data)
    assert (work, weight) == (m.memory_size, m.regions["weight"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    for mid in (acl.mdl_load_from_mem(data),
                acl.mdl_load_from_mem_with_mem(data, acl.rt_malloc(work), work, acl.rt_malloc(weight), weight)):
        ins, outs, ptrs = datasets(acl, dev, x)
        rec = acl.mdl_execute(mid, ins, outs)
        assert rec.counters.args_refreshed == acl.loaded(mid).registered
        np.testing.assert_array_equal(dev.peek(ptrs[0], (2, 3), np.float32), expected(x)["relu:0"])
        acl.mdl_unload(mid)
        with pytest.raises(ModelUnloadedError):
            acl.mdl_execute(mid, ins, outs)


def test_caller_work_memory_covering_the_io_region_backs_it():
    m = mlp()
    data, dev = encode(m), device()
    acl = Acl(dev)
    work, _ = acl.mdl_query_size_from_mem(data)
    mid = acl.mdl_load_from_mem_with_mem(data, acl.rt_malloc(work), work, 0, 0)
    assert acl.loaded(mid).bases.zero_copy_backed


def test_config_handle_reuse_zero_copy_memory():
    m = mlp()
    dev = device()
    acl = Acl(dev)
    cfg = acl.mdl_create_config_handle()
    with pytest.raises(InvalidParam) as e:
        acl.mdl_set_config_opt(cfg, ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 2)
    assert e.value.code == 100000
    acl.mdl_set_config_opt(cfg, ACL_MDL_MEM_ADDR_PTR, encode(m))
    acl.mdl_set_config_opt(cfg, ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 1)
    mid = acl.mdl_load_with_config(cfg)
    assert acl.loaded(mid).options.reuse_zero_copy_memory == 1
    ins, outs, _ = datasets(acl, dev, np.ones((2, 3), np.float32), host=True)
    with pytest.raises(ParamInvalid, match="'x'.*device memory"):
        acl.mdl_execute(mid, ins, outs)


def test_zero_copy_off_through_config_copies():
    m = mlp()
    dev = device()
    acl = Acl(dev)
    cfg = acl.mdl_create_config_handle()
    acl.mdl_set_config_opt(cfg, ACL_MDL_MEM_ADDR_PTR, encode(m))
    acl.mdl_set_config_opt(cfg, ZCSPEC_ZERO_COPY, False)
    mid = acl.mdl_load_with_config(cfg)
    ins, outs, _ = datasets(acl, dev, np.ones((2, 3), np.float32))
    c = acl.mdl_execute(mid, ins, outs).counters
    assert c.d2d_bytes == 3 * 24 and c.args_refreshed == 0


def test_bad_arguments():
    dev = device()
    acl = Acl(dev)
    with pytest.raises(InvalidParam, match="modelSize 0"):
        acl.mdl_load_from_mem(b"")
    with pytest.raises(ParamInvalid, match="not a valid model"):
        acl.mdl_load_from_mem(b"not a model at all")
    with pytest.raises(InvalidParam):
        acl.rt_free(0)
    with pytest.raises(InvalidParam, match="exceeds"):
        acl.rt_memcpy(acl.rt_malloc(8), 8, acl.rt_malloc(16), 16, "ACL_MEMCPY_DEVICE_TO_DEVICE")
