"""``zcspec diff OLD.json NEW.json``: what changed between two plans of one program (checks/plan_diff.py).

Exit 0 when the new plan is no regression, 1 when its reused memory grew by more than
``--threshold`` or a claim that held is violated now, 2 on a file that is not a plan.
"""
from __future__ import annotations

import json

from zcspec.checks.cli.arguments import number_at_least
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import plan_file
from zcspec.checks.plan_diff import diff_plans
from zcspec.spec.picture import plans_svg


def configure(parser) -> None:
    parser.add_argument("old", metavar="OLD.json", help="the plan before (docs/plan-format.md)")
    parser.add_argument("new", metavar="NEW.json", help="the plan after: the same program, another version or flag")
    parser.add_argument("--threshold", type=number_at_least(0, "0.05 for 5%"), default=0.0, metavar="F",
                        help="the fraction reused memory may grow by before it is a regression (default 0: any growth)")
    parser.add_argument("--json", action="store_true", help="print the diff as one JSON object")
    parser.add_argument("--picture", metavar="FILE.svg",
                        help="draw both layouts, old above new, at one address scale")
    parser.add_argument("--most", type=int, default=20, metavar="N", help="rows per list in the text report (default 20)")


def run(args) -> int:
    old, new = plan_file.read(args.old), plan_file.read(args.new)
    diff = diff_plans(old.plan, new.plan, old_title=f"{args.old} ({old.title})", new_title=f"{args.new} ({new.title})",
                      threshold=args.threshold)
    print(json.dumps(diff.to_dict(), sort_keys=True) if args.json else "\n".join(diff.lines(args.most)))
    if args.picture:
        if not args.picture.endswith(".svg"):
            raise UsageError("pictures are SVG files: use a name ending in .svg", file=args.picture)
        svg = plans_svg([(old.plan, f"old: {old.title}: {diff.old_reused:,} bytes reused"),
                         (new.plan, f"new: {new.title}: {diff.new_reused:,} bytes reused")])
        try:
            with open(args.picture, "w", encoding="utf-8") as f:
                f.write(svg)
        except OSError as e:
            raise UsageError(f"cannot be written: {e.strerror or e}", file=args.picture) from e
        if not args.json:
            print(f"picture: {args.picture}")
    return 0 if diff.ok else 1
