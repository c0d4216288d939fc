"""The ExecuTorch programs whose ``.pte`` files zcspec keeps (checks/foreign/programs/executorch/).

Each program is a small ``torch.nn.Module`` source (defines ``M`` and ``args``, and may define a
``config``, an ``ExecutorchBackendConfig``), what its plan should show (``clean``, or the claim a
known ExecuTorch bug breaks, with the bug's issue) and what it exercises. ``write_programs`` exports
each with ExecuTorch's default pipeline (``torch.export``, ``to_edge``, ``to_executorch``: greedy
memory planning, inputs and outputs planned) in a child process, keeps ``program.pte``, and runs the
program with ExecuTorch's own runtime against eager PyTorch on a few inputs; ``program.json``
records the versions and whether the outputs matched. A program that shows a bug of one release
(``made_with``) is made only by that release and skipped by the others. Remaking them needs the
``executorch`` extra (torch and executorch; a separate environment works: ``--python``); reading
them needs nothing:

    python -m zcspec.checks.foreign.executorch_programs [--only NAME ...] [--python PATH]
"""
from __future__ import annotations

import argparse
import base64
import json
import sys
import textwrap
from pathlib import Path

import attrs

from zcspec.checks.foreign.executorch_campaign import TOLERANCE, Worker

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "executorch"


@attrs.frozen
class Program:
    name: str
    what: str
    source: str
    expect: str = "clean"
    issue: str = ""
    made_with: str = ""      # the ExecuTorch release (a version prefix) that makes it; "": any


# ExecuTorch's reinplace pass, asked to take an op with no in-place variant (maximum), marks it with
# _share_alloc_with_arg_idx: its out tensor is planned in its first input's bytes. Before
# pytorch/executorch#21840 the planner placed every other tensor before these and did not extend the
# input's lifetime to the output's, so sin's result could take the same bytes while b still lives.
_SHARED_ALLOC_WHAT = ("maximum(a, x) planned in a's bytes by ExecuTorch's reinplace pass "
                      "(_share_alloc_with_arg_idx), then sin of it while it still lives")
_SHARED_ALLOC = """
    import torch
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.dialects._ops import ops
    class M(torch.nn.Module):
        def forward(self, x):
            a = x * 2.0
            b = torch.maximum(a, x)
            c = torch.sin(b)
            return b * c + x
    args = [(torch.linspace(-1, 1, 5).reshape(1, 5),), (torch.randn(1, 5),), (torch.ones(1, 5),)]
    config = ExecutorchBackendConfig(reinplace_extra_ops=frozenset({ops.edge.aten.maximum.default}))
"""

PROGRAMS = (
    Program("mlp", "a 3-layer MLP with ReLU: a linear chain of out-variant kernels", """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.c = torch.nn.Linear(16, 32), torch.nn.Linear(32, 32), torch.nn.Linear(32, 4)
            def forward(self, x):
                return self.c(torch.relu(self.b(torch.relu(self.a(x)))))
        args = [(torch.randn(8, 16),), (torch.ones(8, 16),)]
    """),
    Program("concat-heavy", "branches concatenated twice, then reduced: tensors that die at a cat", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                a, b, c = x.sin(), x.cos(), x * 2
                y = torch.cat([a, b, c], dim=1)
                z = torch.cat([y.relu(), y.tanh()], dim=0)
                return z.sum(dim=0), y.mean()
        args = [(torch.randn(4, 8),), (torch.zeros(4, 8),)]
    """),
    Program("one-cond", "one torch.cond whose result is used after it: branch memory moved out by MoveCall", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                pred = x.sum() > 0
                a = torch.cond(pred, lambda v: v.sin() * 2, lambda v: v.cos() + 1, [x])
                return a * x + 1
        args = [(torch.randn(4, 4),), (-torch.ones(4, 4),), (torch.ones(4, 4),)]
    """),
    Program("cond-then-math", "a torch.cond followed by kernels that need fresh memory while its result lives", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                a = torch.cond(x.mean() > 0, lambda v: v.exp(), lambda v: v.abs() + 2, [x])
                b = (x * 3).relu() + x.tanh()
                return a + b
        args = [(torch.randn(6, 6),), (torch.ones(6, 6),), (-torch.ones(6, 6),)]
    """),
    Program("map-rows", "a map over the rows (a loop: ExecuTorch jumps back to the body's start) between kernels", """
        import torch
        from functorch.experimental import control_flow
        class M(torch.nn.Module):
            def forward(self, x):
                h = torch.relu(x * 2)
                h = control_flow.map(lambda row: torch.tanh(row) * 2.0 + 1.0, h)
                return h + x, h.sum(dim=0)
        args = [(torch.randn(5, 4),), (torch.ones(5, 4),)]
    """),
    Program("two-conds", "two sequential torch.cond calls, the first's result live through the second: "
            "the class of pytorch/executorch#21490", """
        import torch
        class M(torch.nn.Module):
            def forward(self, x):
                pred = x.sum() > 0
                a = torch.cond(pred, lambda v: v.sin() * 2, lambda v: v.cos() + 1, [x])
                b = torch.cond(pred, lambda v: v * 3 + 1, lambda v: v - 5, [x])
                return a + b, a
        args = [(torch.randn(4, 4),), (-torch.ones(4, 4),), (torch.ones(4, 4),)]
    """, expect="LAYOUT-NO-OVERLAP", issue="pytorch/executorch#21490"),
    Program("shared-alloc-lifetime", _SHARED_ALLOC_WHAT, _SHARED_ALLOC, expect="LAYOUT-NO-OVERLAP",
            issue="pytorch/executorch#21840", made_with="1.4."),
    Program("shared-alloc-lifetime-fixed", _SHARED_ALLOC_WHAT + "; planned by the release with the fix",
            _SHARED_ALLOC, issue="pytorch/executorch#21840", made_with="1.5.1"),
)

def export_program(program: Program, folder: Path, python: str = sys.executable) -> dict | None:
    """Export ``program`` with the campaign's worker (checks/foreign/executorch_campaign.py), keep its
    ``program.pte``, and return the versions and how far ExecuTorch's runtime is from eager PyTorch;
    None, with nothing written, when ``python``'s ExecuTorch is not the release the program needs."""
    worker = Worker(python)
    try:
        if not worker.versions["executorch"].startswith(program.made_with):
            return None
        reply = worker.run(textwrap.dedent(program.source))
    finally:
        worker.close()
    folder.mkdir(parents=True, exist_ok=True)
    if "error" in reply:
        raise RuntimeError(f"program {program.name!r} failed: {reply['error']}")
    (folder / "program.pte").write_bytes(base64.b64decode(reply["pte"]))
    diff = float(reply["max_abs_diff"])
    return {**worker.versions, "max_abs_diff_vs_eager": diff, "matches_eager": diff <= TOLERANCE}


def write_programs(out: Path = PROGRAMS_DIR, only=(), python: str = sys.executable) -> list[str]:
    lines = []
    for p in PROGRAMS:
        if only and p.name not in only:
            continue
        facts = export_program(p, out / p.name, python)
        if facts is None:
            lines.append(f"{p.name}: skipped, made with ExecuTorch {p.made_with}* only (the Python given has another)")
            continue
        meta = {"program": p.name, "what": p.what, "expect": p.expect, "issue": p.issue, **facts}
        (out / p.name / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{p.name}: executorch {facts['executorch']}, runtime vs eager max |diff| "
                     f"{facts['max_abs_diff_vs_eager']:.3g}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help="remake only these programs")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python that has torch and executorch (default: this one)")
    args = parser.parse_args(argv)
    for line in write_programs(args.out, args.only, args.python):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
