"""``zcspec lower MODEL [--dump] [--always-zero-copy] [--ge-compat] [--trust-shape] [--single-stream]``.

Lowers MODEL (.onnx, graph .json, zoo:NAME or .zcm) into runtime v2's execution graph and
prints what ModelOutTensorZeroCopy (and TrustOutTensor, with --trust-shape) changed: one line
per rewritten, moved or removed node. ``--dump`` prints the whole graph before and after
the passes, one node per line (index, type, name, inputs, control edges, attributes).
"""
from __future__ import annotations

from collections import Counter

from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.models import load_compiled
from zcspec.impl.platform.soc import PROFILES
from zcspec.impl.runtime.v2.lowering import lower
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.passes import PIPELINE, run_passes


def configure(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--dump", action="store_true", help="print the execution graph before and after the passes")
    parser.add_argument("--always-zero-copy", action="store_true",
                        help="lower with always_zero_copy (SplitTensorForOutputData instead of AllocModelOutTensor)")
    parser.add_argument("--ge-compat", action="store_true", help="GE's unchecked AllocModelOutTensor sharing")
    parser.add_argument("--trust-shape", action="store_true", help="trust_shape_on_out_tensor (runs TrustOutTensor)")
    parser.add_argument("--single-stream", action="store_true", help="enable_single_stream")
    parser.add_argument("--soc", default="ascend910b", choices=sorted(PROFILES), help="SoC profile (default ascend910b)")


def changes(before, after) -> list[str]:
    """One line per node the passes rewrote, moved or removed."""
    lines = []
    for n in before.nodes:
        new = after.node.get(n.name)
        if new is None:
            lines.append(f"removed   {n.type} {n.name}")
        elif new.type != n.type or new.inputs != n.inputs:
            ins = ", ".join(map(str, new.inputs))
            lines.append(f"rewritten {n.name}: {n.type} -> {new.type} <- {ins}")
        elif before.position[n.name] - after.position[n.name] > 1:
            lines.append(f"moved     {n.name} to position {after.position[n.name]}")
    return lines


def run(args) -> int:
    model = load_compiled(args.model, args.shape, args.value, soc=args.soc)
    options = LoweringOptions(always_zero_copy=args.always_zero_copy, ge_compat=args.ge_compat,
                            trust_shape_on_out_tensor=args.trust_shape, enable_single_stream=args.single_stream)
    before = lower(model, options)
    after = run_passes(before, options)
    if args.dump:
        applied = [name for name, _fn, enabled in PIPELINE if enabled(options)]
        print("== before the passes ==")
        print(before.dump())
        print(f"== after {', '.join(applied) or 'no pass'} ==")
        print(after.dump())
    counts = Counter(n.type for n in after.nodes)
    print(f"{model.name}: {len(before.nodes)} nodes before the passes, {len(after.nodes)} after; "
          + ", ".join(f"{t} {c}" for t, c in sorted(counts.items()) if t in _SHOWN))
    for line in changes(before, after):
        print("  " + line)
    return 0


_SHOWN = ("AllocMemory", "FreeMemory", "AllocModelOutTensor", "SplitTensorForOutputData", "EnsureTensorAtOutMemory",
          "LaunchKernel", "LaunchMemset", "LaunchHccl")
