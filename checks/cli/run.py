"""``zcspec run MODEL [--runtime v1|v2] [--no-zero-copy] [--input NAME=FILE.npy ...] [--output-dir DIR] [--json]``.

The contract of ``zcspec run``: inputs not given are ones; every input is staged
into a device-resident user buffer (device malloc + copy, as a user would);
the model executes once; each output is written to
``DIR/<output name with / replaced by _>.npy`` (a type numpy cannot name, such as
float8 or int4, as its raw items with a ``.json`` beside it naming the ONNX type:
``array_files``); ``--json`` prints the outputs' shapes and dtypes and the device counters of the execute call alone (staging
before and reading back after are the user's copies, not counted). MODEL is an
.onnx, a graph .json, ``zoo:NAME`` or a compiled .zcm.

Runtime errors caused by the caller's input (a bad buffer, an option value) are
``BadInput`` and exit with code 2 like any bad input; internal runtime errors exit with 1.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

from zcspec.checks.cli import array_files
from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.errors import UsageError
from zcspec.checks.models import load_compiled
from zcspec.impl.device import Device
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.platform.soc import PROFILES
from zcspec.impl.runtime.errors import RuntimeLayerError
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.runner import run as run_v2


def configure(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--runtime", default="v1", choices=("v1", "v2"), help="runtime to execute with (default v1)")
    parser.add_argument("--no-zero-copy", action="store_true", help="copy every input and output instead of binding")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input's value (repeatable); inputs not given are all ones")
    parser.add_argument("--output-dir", metavar="DIR", help="write each output as DIR/<name>.npy (types numpy cannot name: raw items, with DIR/<name>.json naming the type)")
    parser.add_argument("--json", action="store_true", help="print output shapes/dtypes and the execute call's counters")
    parser.add_argument("--soc", default="ascend910b", choices=sorted(PROFILES), help="SoC profile (default ascend910b)")
    parser.add_argument("--strategy", default="ge", choices=("ge", "compact"), help="memory planning strategy")


def _input_arrays(model, specs: list[str]) -> dict:
    """Every model input's array: from ``NAME=FILE.npy`` where given, else ones of its shape and dtype."""
    ios = {io.tensor: io for io in model.tasks.inputs}
    arrays = {}
    for spec in specs:
        name, sep, path = spec.rpartition("=")
        if not sep or not name:
            raise UsageError(f"--input {spec!r}: expected NAME=FILE.npy")
        if name not in ios:
            raise UsageError(f"--input {spec!r}: {name!r} is not a model input; inputs are {sorted(ios)}")
        try:
            given = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise UsageError(f"--input {spec!r}: cannot read {path!r}: {e}") from e
        io = ios[name]
        arrays[name] = array_files.as_input(given, io.dtype)
        if arrays[name] is None or given.shape != tuple(io.shape):
            want = np.dtype(dtypes.numpy_dtype(io.dtype))
            raw = "" if array_files.npy_readable(want) else f" (or its raw items as {array_files.raw_items_dtype(want)})"
            raise UsageError(f"--input {spec!r}: array is {given.dtype}{list(given.shape)}, input {name!r} "
                             f"needs {io.dtype}{list(io.shape)}{raw}")
    for name, io in ios.items():
        arrays.setdefault(name, np.ones(io.shape, np.dtype(dtypes.numpy_dtype(io.dtype))))
    return arrays


def _execute(args, model, device, inputs, outputs):
    """Run once; returns the counters of the execute call alone."""
    zero_copy = not args.no_zero_copy
    if args.runtime == "v1":
        lm = load(device, model, LoadOptions(zero_copy=zero_copy))
        try:
            return lm.execute(inputs, outputs).counters
        finally:
            lm.unload()
    # runner.run loads and unloads around the execute call; subtract a bare load + unload
    # (deterministic: weights, allocations) to leave the counters of the execute call alone.
    before = device.counters
    StreamExecutor(model, device, LoweringOptions(zero_copy=zero_copy)).unload()
    lifecycle = device.counters - before
    before = device.counters
    run_v2(model, device, inputs, outputs, zero_copy=zero_copy)
    return (device.counters - before) - lifecycle


def run(args) -> int:
    model = load_compiled(args.model, args.shape, args.value, soc=args.soc, strategy=args.strategy)
    arrays = _input_arrays(model, args.input)
    device = Device(model.soc, trace=False)
    inputs = stage_inputs(device, model, arrays)
    outputs = alloc_outputs(device, model)
    try:
        counters = _execute(args, model, device, inputs, outputs)
        results = read_outputs(device, model, outputs)
    except BadInput:
        raise  # the caller's buffer or option: exit code 2, like any bad input (checks/cli/main.py)
    except RuntimeLayerError as e:
        print(f"zcspec run: internal error: {e}", file=sys.stderr)
        return 1
    finally:
        free_buffers(device, inputs + outputs)
    if args.output_dir:
        types = {io.tensor: io.dtype for io in model.tasks.outputs}
        os.makedirs(args.output_dir, exist_ok=True)
        for name, a in results.items():
            array_files.write_output(args.output_dir, name, a, types[name])
    if args.json:
        print(json.dumps({
            "model": model.name, "runtime": args.runtime, "zero_copy": not args.no_zero_copy,
            "outputs": {n: {"shape": list(a.shape), "dtype": str(a.dtype)} for n, a in results.items()},
            "counters": counters.as_dict(),
        }, indent=2, sort_keys=True))
    else:
        for n, a in results.items():
            print(f"{n}: {a.dtype}{list(a.shape)}")
    return 0

