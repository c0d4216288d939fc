"""``zcspec plan MODEL [--strategy ge|compact] [--json] [--picture FILE] [--no-reuse]`` and ``--buffers FILE.csv``.

This module parses the flags and dispatches: MODEL to ``zcspec.checks.cli.plan_model`` (the passes,
then the memory planner: a table, the ``--json`` contract or a ``--picture``), ``--buffers FILE.csv``
to ``zcspec.checks.cli.plan_buffers`` (a bare MiniMalloc instance; it excludes MODEL). The model path
is imported only when MODEL is given, as ``main`` imports only the subcommand it runs: it brings in
onnx (half a second), which a bare packing instance does not need.
"""
from __future__ import annotations

import importlib

from zcspec.checks.cli import plan_buffers
from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.errors import UsageError


def configure(parser) -> None:
    add_model_arguments(parser, nargs="?")
    parser.add_argument("--strategy", default="ge", choices=("ge", "compact"),
                        help="ge: GE's block assignment (default); compact: same rules, tighter offsets")
    parser.add_argument("--json", action="store_true", help="print the plan as one JSON object (the contract)")
    parser.add_argument("--picture", metavar="FILE.svg|FILE.png", help="draw the layout: steps across, addresses up")
    parser.add_argument("--no-reuse", action="store_true", help="disable memory reuse (ge.exec.disableReuseMemory=1)")
    parser.add_argument("--soc", default="ascend910b", help="SoC profile whose granularities and limits apply")
    parser.add_argument("--buffers", metavar="FILE.csv", help="plan a bare instance (id,lower,upper,size) instead of MODEL")
    plan_buffers.configure_buffers(parser)  # --capacity, --time-limit: the packer helper's flags for --buffers


def run(args) -> int:
    if args.buffers and args.model:
        raise UsageError("give either MODEL or --buffers FILE.csv, not both")
    if args.buffers:
        if args.picture or args.no_reuse or args.shape:
            raise UsageError("--picture, --no-reuse and --shape apply to MODEL, not to --buffers")
        return plan_buffers.run(args)
    if not args.model:
        raise UsageError("plan needs MODEL (an .onnx, a graph .json or zoo:NAME) or --buffers FILE.csv")
    return importlib.import_module("zcspec.checks.cli.plan_model").run(args)
