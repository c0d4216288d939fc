"""``zcspec campaign xla|executorch|iree|litert|tvm``: Hypothesis draws programs, the compiler plans them, the spec checks the plans.

Each program is compiled, its plan read from the compiler's own artefact and checked with every
claim that applies, and its result compared with eager execution (checks/foreign/xla_campaign.py).
The first confirmed bug (a claim broken and the result wrong) or miss (the result wrong, every claim
holding) is shrunk and written to ``--out`` as a file ``zcspec replay`` re-checks without the
compiler; exit 1 then. Hazards (a claim broken, the result right) are counted and the first is
written too. Needs the compiler's extra: ``xla`` (jax), ``iree`` or ``litert`` in this environment, or for
ExecuTorch a Python that has torch and ExecuTorch, for TVM one that has apache-tvm (``--python``,
default this one).
"""
from __future__ import annotations

import importlib.util
import sys

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import executorch_campaign, iree_campaign, litert_campaign, tvm_campaign, xla_campaign
from zcspec.checks.foreign.campaign_core import write_finding

PLANNERS = ("executorch", "iree", "litert", "tvm", "xla")
WORKER_PLANNERS = ("executorch", "tvm")   # compile in a worker of --python


def configure(parser) -> None:
    parser.add_argument("planner", choices=PLANNERS, help="the compiler whose plans to check")
    parser.add_argument("--examples", type=int, default=300, metavar="N", help="programs to draw at most (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis's seed (default 0)")
    parser.add_argument("--budget", type=float, default=600.0, metavar="S",
                        help="stop drawing after S seconds (default 600; shrinking a finding may take longer)")
    parser.add_argument("--max-steps", type=int, default=5, metavar="K", help="steps per program at most (default 5)")
    parser.add_argument("--out", default="findings", metavar="DIR", help="where findings are written (default findings/)")
    parser.add_argument("--no-control-flow", action="store_true",
                        help="executorch: draw no cond or map (looks past pytorch/executorch#21490); tvm: draw no "
                             "if (looks past apache/tvm#20191); both are open in every release")
    parser.add_argument("--python", default=sys.executable, metavar="PATH",
                        help="executorch: the Python that has torch and ExecuTorch; tvm: the Python that has TVM "
                             "(default: this one)")


def run(args) -> int:
    if args.examples < 1 or args.budget <= 0 or args.max_steps < 1:
        raise UsageError("--examples and --max-steps must be at least 1, --budget positive")
    where = f", compiling with {args.python}" if args.planner in WORKER_PLANNERS else ""
    print(f"{args.planner} campaign: up to {args.examples} programs of at most {args.max_steps} steps, seed {args.seed}, "
          f"budget {args.budget:.0f} s{where}")
    options = dict(examples=args.examples, seed=args.seed, budget=args.budget, max_steps=args.max_steps, progress=print)
    if args.no_control_flow and args.planner not in WORKER_PLANNERS:
        raise UsageError(f"--no-control-flow applies to executorch and tvm, whose campaigns draw control flow; "
                         f"the {args.planner} campaign draws none")
    if args.planner == "executorch":
        result = executorch_campaign.campaign(args.python, higher_order=not args.no_control_flow, **options)
    elif args.planner == "tvm":
        result = tvm_campaign.campaign(args.python, **({"max_ifs": 0} if args.no_control_flow else {}), **options)
    elif args.planner == "iree":
        if importlib.util.find_spec("iree.runtime") is None or importlib.util.find_spec("iree.compiler") is None:
            raise UsageError("the iree campaign needs IREE's compiler and runtime: pip install -e '.[iree]'")
        result = iree_campaign.campaign(**options)
    elif args.planner == "litert":
        if importlib.util.find_spec("ai_edge_litert") is None:
            raise UsageError("the litert campaign needs LiteRT: pip install -e '.[litert]'")
        result = litert_campaign.campaign(**options)
    else:
        if importlib.util.find_spec("jax") is None:
            raise UsageError("the xla campaign needs jax: pip install -e '.[xla]'")
        result = xla_campaign.campaign(**options)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(result.versions.items()))
    print(f"{result.programs} programs in {result.seconds:.1f} s: {result.clean} clean, {result.hazards} hazard(s), "
          f"{result.refused} refused by the compiler{', 1 finding' if result.finding else ''} ({versions})")
    if result.first_hazard is not None:
        print(f"  first hazard ({', '.join(result.first_hazard.claims)}): "
              f"{write_finding(args.planner, result.first_hazard, args.out, result.versions)}")
    if result.finding is None:
        return 0
    f = result.finding
    print(f"  {f.kind}: {', '.join(f.claims) or 'no claim broken'}; result differs from the oracle by {f.max_abs_diff:.3g}")
    for v in f.violations[:3]:
        print(f"    {v}")
    print("  shrunk program:\n" + "\n".join("    " + line for line in f.program.source().splitlines()))
    print(f"  wrote {write_finding(args.planner, f, args.out, result.versions)}")
    return 1
