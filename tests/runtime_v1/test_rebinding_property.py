"""Property: over any sequence of executions that rebind, reuse or host-place buffers, outputs are
right, the spec's invariants hold, and exactly the slots of the I/O whose address changed are refreshed."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check
from tests.helpers.runtime_v1 import device, expected, mlp

MODEL = mlp()
CHOICES = ("fresh", "same", "host")


def steps():
    return st.lists(st.tuples(st.sampled_from(CHOICES), st.sampled_from(CHOICES), st.integers(-3, 3)),
                    min_size=1, max_size=6)


def _inputs(dev, choice, prev, x):
    if choice == "same" and prev is not None and prev.placement == "device":
        src = dev.upload(x, tag="refill")   # the user refills its own buffer
        dev.memcpy(prev.addr, src, x.nbytes)
        dev.free(src)
        return prev
    return stage_inputs(dev, MODEL, {"x": x}, "host" if choice == "host" else "device")[0]


def _outputs(dev, choice, prev):
    if choice == "same" and prev is not None and prev[0].placement == "device":
        return prev
    return alloc_outputs(dev, MODEL, "host" if choice == "host" else "device")


@given(zero_copy=st.booleans(), plan=steps())
def test_rebinding_sequences(zero_copy, plan):
    dev = device()
    lm = load(dev, MODEL, LoadOptions(zero_copy=zero_copy))
    per_io = {z.key: len(z.slots) for z in lm.io if not z.copy_only}
    bound: dict[tuple, int] = {}    # (role, index) -> the base its slots hold (an independent model of the refresh)
    x_buf = outs = None
    for in_choice, out_choice, k in plan:
        x = np.full((2, 3), k, np.float32) + np.arange(6, dtype=np.float32).reshape(2, 3)
        x_buf = _inputs(dev, in_choice, x_buf, x)
        outs = _outputs(dev, out_choice, outs)
        rec = lm.execute([x_buf], outs)
        report = check(observe_execution(lm, rec))
        assert report.ok, str(report)
        want = 0
        for key, n in per_io.items():
            addr = rec.io_addresses[key]
            want += n if bound.get(key) != addr else 0
            bound[key] = addr
        assert rec.counters.args_refreshed == want
        got = read_outputs(dev, MODEL, outs)
        for name, value in expected(x).items():
            np.testing.assert_array_equal(got[name], value)
        assert rec.counters.allocated_bytes == 0
    lm.unload()
    assert not any(a.tag.startswith("v1 ") for a in dev.allocations())
