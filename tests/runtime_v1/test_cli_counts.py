"""``zcspec run --json``'s counters against the spec's own count of the same call's trace (issue 35).

The CLI runs untraced; the same call made with a traced device is observed, and
``spec.invariants._counts.trace_counts`` recounts its copies (direction from the addresses), launches
and argument writes. The CLI's numbers must be those, for both runtimes, zero copy on and off; a device
counter that miscounts a copy makes them differ.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.models import load_compiled
from zcspec.impl.device import Device
from zcspec.impl.device.counters import Tally
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.graph_json import to_json
from zcspec.impl.runtime.user_buffers import alloc_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v1.observe import observe_execution as observe_v1
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution as observe_v2
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.runner import to_tensor
from zcspec.spec.invariants._counts import reported_counts, trace_counts
from tests.helpers.unseeded_bugs import attribute


def _graph(tmp_path):
    """x -> Relu -> y, and x passed straight through to z (an output that is always copied)."""
    b = GraphBuilder("counts")
    x = b.input("x", (2, 3))
    b.output(b.op("Relu", [x], name="r"), b.op("ReduceSum", [x], name="s", shape=(2, 1), axes=(1,), keepdims=1), x)
    path = tmp_path / "g.json"
    path.write_text(to_json(b.build()))
    return str(path)


def _cli_counts(path, capsys, runtime, zero_copy):
    argv = ["run", path, "--json", "--runtime", runtime] + ([] if zero_copy else ["--no-zero-copy"])
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return reported_counts(json.loads(out)["counters"])


def _traced_counts(path, runtime, zero_copy):
    """The same call as ``zcspec run`` makes, on a traced device, counted by the spec from its trace."""
    model = load_compiled(path)
    dev = Device(model.soc)
    ins = stage_inputs(dev, model, {io.tensor: np.ones(io.shape, np.float32) for io in model.tasks.inputs})
    outs = alloc_outputs(dev, model)
    if runtime == "v1":
        lm = load(dev, model, LoadOptions(zero_copy=zero_copy))
        return trace_counts(observe_v1(lm, lm.execute(ins, outs)))
    exe = StreamExecutor(model, dev, LoweringOptions(zero_copy=zero_copy))
    exe.execute([to_tensor(b) for b in ins], [to_tensor(b) for b in outs])
    return trace_counts(observe_v2(exe))


@pytest.mark.parametrize("runtime", ["v1", "v2"])
@pytest.mark.parametrize("zero_copy", [True, False])
def test_cli_counts_are_the_traces(tmp_path, capsys, runtime, zero_copy):
    path = _graph(tmp_path)
    counted = _cli_counts(path, capsys, runtime, zero_copy)
    assert counted == _traced_counts(path, runtime, zero_copy)
    assert counted["d2d_calls"] >= 1 and counted["launches"] >= 2   # the pass-through output is copied


def test_a_counter_that_miscounts_a_copy_shows(tmp_path, capsys):
    """The device counts each copy's bytes one short: the CLI's numbers and the trace's part."""
    path = _graph(tmp_path)
    with attribute(Tally, "copy", lambda copy: lambda self, direction, nbytes: copy(self, direction, nbytes - 1)):
        counted = _cli_counts(path, capsys, "v1", False)
    traced = _traced_counts(path, "v1", False)
    assert counted["d2d_calls"] == traced["d2d_calls"] and counted["d2d_bytes"] == traced["d2d_bytes"] - counted["d2d_calls"]
