"""``zcspec import PLANNER SOURCE``: read another compiler's memory plan into the plan observation.

``iree DUMP.txt``: the transient plan of every function ``iree-compile`` packed, from the stream IR
printed before and after its layout pass (checks/foreign/iree_mlir.py); it needs no IREE.

``litert FILE.tflite``: the op list from the file and the arena offsets from LiteRT's builtin
interpreter (the litert extra), or from a saved record (``--arena``; checks/foreign/tflite.py).

``executorch FILE.pte``: the plans of one method (``--module``, default the first) of an ExecuTorch
program, one per execution path through its conditionals (checks/foreign/pte.py); it needs neither
torch nor ExecuTorch.

``tvm FILE``: the Relax functions of a module TVM printed as TVMScript after its memory planning pass
(``relax.transform.StaticPlanBlockMemory``), one plan per function and execution path through its
``if``s (``--module``: one function; checks/foreign/tvm_relax.py); it needs no TVM.

``xla DUMP``: a folder written with ``XLA_FLAGS='--xla_dump_to=DUMP --xla_dump_hlo_as_text'`` (or one
of its ``*-buffer-assignment.txt`` files); every module in it, or those ``--module`` names. The
reader needs neither jax nor XLA (docs/foreign-planners.md says what it reads).

Without ``-o`` the plan's JSON goes to stdout (one module) ; ``-o FILE`` writes it, ``-o DIR`` writes
one file per module when there are several. ``--check`` then judges each plan as ``zcspec check``
does (exit 1 on a violation); ``--picture FILE.svg`` draws the layout (one module).
"""
from __future__ import annotations

import json
import os

from zcspec.checks.cli.check_plan import add_report_arguments, print_reports
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import iree_mlir, plan_file, pte, tflite, tvm_relax, xla_dump
from zcspec.checks.foreign.plan_file import ImportedPlan

PLANNERS = ("executorch", "iree", "litert", "tvm", "xla")


def configure(parser) -> None:
    parser.add_argument("planner", choices=PLANNERS, help="the compiler whose artefact SOURCE is")
    parser.add_argument("source", metavar="SOURCE",
                        help="executorch: a .pte file; litert: a .tflite file; iree: iree-compile's stderr with the stream IR printed before "
                             "and after iree-stream-layout-slices; tvm: a Relax module printed after StaticPlanBlockMemory; "
                             "xla: the dump folder (or one *-buffer-assignment.txt)")
    parser.add_argument("--module", metavar="TEXT",
                        help="xla: only the modules whose name contains TEXT; executorch: the method (default: the first); "
                             "tvm: the Relax function (default: every one)")
    parser.add_argument("-o", "--output", metavar="FILE|DIR",
                        help="write the plan JSON here (a folder, one file per module, when there are several)")
    parser.add_argument("--alignment", type=int, default=None, metavar="N",
                        help=f"the offset alignment each arena declares (default: xla {xla_dump.CPU_ALIGNMENT}, XLA's CPU "
                             f"backend; executorch {pte.ALIGNMENT}, its memory planning pass); LAYOUT-ARENA-ALIGN holds "
                             f"a plan to at least its planner's documented alignment all the same")
    parser.add_argument("--arena", metavar="FILE.json",
                        help="litert: the arena record to use (default: run LiteRT's interpreter, the litert extra)")
    parser.add_argument("--save-arena", metavar="FILE.json", help="litert: also write the arena record read")
    parser.add_argument("--check", action="store_true", help="judge each plan as `zcspec check` does")
    add_report_arguments(parser)


def imported(args) -> list[ImportedPlan]:
    default = pte.ALIGNMENT if args.planner == "executorch" else xla_dump.CPU_ALIGNMENT
    alignment = args.alignment if args.alignment is not None else default
    if alignment < 1:
        raise UsageError(f"--alignment={alignment} must be at least 1")
    if args.planner == "litert":
        if args.arena:
            offsets = tflite.load_record(args.arena)
        else:
            record = tflite.record_arena(args.source)
            if args.save_arena:
                try:
                    with open(args.save_arena, "w", encoding="utf-8") as f:
                        json.dump(record, f, indent=1)
                except OSError as e:
                    raise UsageError(f"cannot be written: {e.strerror or e}", file=args.save_arena) from e
            offsets = {int(k): v for k, v in record["offsets"].items()}
        meta = os.path.join(os.path.dirname(os.path.abspath(args.source)), "program.json")
        plan = tflite.read_tflite(args.source, offsets, alignment=args.alignment or tflite.ALIGNMENT)
        return [ImportedPlan("litert", args.source, _kept_name(meta) or os.path.basename(args.source), plan)]
    if args.planner == "iree":
        plans = iree_mlir.read_iree_dump(args.source, alignment=args.alignment or 1)
        chosen = [(f, p) for f, p in plans if args.module is None or args.module in f]
        if not chosen:
            raise UsageError(f"no packed function whose name contains {args.module!r}; functions: "
                             f"{[f for f, _ in plans]}", file=args.source)
        meta = os.path.join(os.path.dirname(os.path.abspath(args.source)), "program.json")
        name = _kept_name(meta)
        return [ImportedPlan("iree", args.source, f"{name}:{f}" if name and len(chosen) > 1 else (name or f), p)
                for f, p in chosen]
    if args.planner == "tvm":
        plans = tvm_relax.read_relax(args.source, function=args.module, alignment=args.alignment or 1)
        name = _kept_name(os.path.join(os.path.dirname(os.path.abspath(args.source)), "program.json"))
        return [ImportedPlan("tvm", args.source, title, p.plan) for title, p in zip(tvm_relax.titles(plans, name), plans)]
    if args.planner == "executorch":
        method, paths = pte.read_pte(args.source, method=args.module, alignment=alignment)
        meta = os.path.join(os.path.dirname(os.path.abspath(args.source)), "program.json")
        name = _kept_name(meta) or f"{os.path.basename(args.source)}:{method}"
        return [ImportedPlan("executorch", args.source, f"{name} [{label}]" if label else name, plan)
                for label, plan in paths]
    modules = xla_dump.find_modules(args.source, args.module)
    return [ImportedPlan("xla", args.source, _program(m), xla_dump.read_module(m, alignment=alignment))
            for m in modules]


def _program(module) -> str:
    """A kept program's name (its folder's program.json), else the module's."""
    return _kept_name(module.files[0].parent / "program.json") or module.name.removesuffix(".cpu_after_optimizations")


def _kept_name(meta) -> str:
    try:
        with open(meta, encoding="utf-8") as f:
            return str(json.load(f).get("program") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def run(args) -> int:
    plans = imported(args)
    if args.picture and len(plans) > 1:
        raise UsageError(f"--picture draws one plan; {args.source} has {len(plans)} modules: choose one with --module "
                         f"({', '.join(p.program for p in plans[:6])}{', ...' if len(plans) > 6 else ''})")
    if args.output:
        _write(plans, args.output)
    elif not args.check:
        if len(plans) > 1:
            raise UsageError(f"{len(plans)} modules: give -o DIR to write one file each, --module to choose one, "
                             f"or --check ({', '.join(p.program for p in plans[:6])}{', ...' if len(plans) > 6 else ''})",
                             file=args.source)
        print(plan_file.to_json(plans[0]))
        return 0
    return print_reports(plans, args) if args.check else 0


def _write(plans: list[ImportedPlan], out: str) -> None:
    if len(plans) == 1 and not os.path.isdir(out):
        plan_file.write(plans[0], out)
        print(f"wrote {out}")
        return
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot be made a folder: {e.strerror or e}", file=out) from e
    for p in plans:
        plan_file.write(p, os.path.join(out, f"{p.program}.json"))
    print(f"wrote {len(plans)} plan(s) to {out}/")
