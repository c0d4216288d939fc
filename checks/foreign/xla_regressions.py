"""XLA plan-quality regressions kept as facts: one program dumped by several jax releases (or flags).

A regression of plan quality breaks no claim: every plan is correct, one is larger. So each
program here is ``clean`` in every version, and the facts are the differences between its dumps
(checks/foreign/programs/xla/NAME-jaxVERSION/), which ``zcspec diff OLD.json NEW.json`` compares
after ``zcspec import xla``. Each folder's ``program.json`` names the issue, the jax and jaxlib
that made the dump and whether the compiled result matched eager execution.

Each release runs in a Python of its own (a venv with ``jax==V jaxlib==V``); the folder is named by
the version that actually ran:

    python -m zcspec.checks.foreign.xla_regressions --python /venvs/jax071/bin/python \\
        --python /venvs/jax072/bin/python [--only NAME ...] [--out DIR]
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from zcspec.checks.foreign.xla_programs import PROGRAMS_DIR, Program, dump, program_json

REGRESSIONS = (
    # openxla/xla#45912. The stored issue text ends at "s = lax"; the loop's call and the second update
    # are written from the issue's own outline ("while loop reads A (read-only) -> elementwise update
    # B -> output (aliased to x)"). 2**16 elements: with fewer, jaxlib 0.7.1 does not split the exp
    # across threads (a `call` of a parallel computation) and keeps the temporary too.
    Program("donated-loop-reads-intermediate", "a donated x, exp(x), a fori_loop that reads it, then a product: "
            "the reproducer of openxla/xla#45912 (in place in x's buffer up to jaxlib 0.7.1; from 0.7.2 exp(x) "
            "gets a temporary of x's size)", """
        import jax, jax.numpy as jnp
        from jax import lax
        N = 1 << 16
        def f(x_initial):
            x_intermediate = jnp.exp(x_initial)
            def body(i, s):
                return s + x_intermediate[i * (N // 8)]
            s = lax.fori_loop(0, 8, body, jnp.float32(0))
            return x_intermediate * s
        args = (jnp.linspace(-1.0, 1.0, N, dtype=jnp.float32),)
        donate = (0,)
    """, issue="openxla/xla#45912"),
    # openxla/xla#20440 (jax-ml/jax#25399): the issue's first program at 100x100 instead of
    # 10000x10000. XLA:CPU copies the donated x twice rather than reading x[0, 0] before updating x
    # in place; the flag the issue names makes copy insertion elide both copies.
    Program("donated-read-then-update", "x[0, 0] read and x.at[0, 0].add(1) of a donated x: the reproducer of "
            "openxla/xla#20440 (XLA:CPU copies x twice)", """
        import jax, jax.numpy as jnp
        def f(x):
            y = x[0, 0]
            x = x.at[0, 0].add(1)
            return x, y
        args = (jnp.arange(10000, dtype=jnp.float32).reshape(100, 100),)
        donate = (0,)
    """, issue="openxla/xla#20440"),
    Program("donated-read-then-update-region-analysis", "the program of openxla/xla#20440 compiled with "
            "--xla_cpu_copy_insertion_use_region_analysis=true: no copy, x updated in its own buffer", """
        import jax, jax.numpy as jnp
        def f(x):
            y = x[0, 0]
            x = x.at[0, 0].add(1)
            return x, y
        args = (jnp.arange(10000, dtype=jnp.float32).reshape(100, 100),)
        donate = (0,)
    """, issue="openxla/xla#20440", xla_flags="--xla_cpu_copy_insertion_use_region_analysis=true"),
)


# The known regressions as kept folders: (the good plan, the plan that regressed, the issue). No claim
# breaks on either side; ``zcspec diff GOOD BAD`` finds each (tests/foreign/test_xla_regressions.py,
# benchmarks/foreign_plans.py).
PAIRS = (
    ("donated-loop-reads-intermediate-jax0.7.1", "donated-loop-reads-intermediate-jax0.7.2", "openxla/xla#45912"),
    ("donated-read-then-update-region-analysis-jax0.10.2", "donated-read-then-update-jax0.10.2",
     "openxla/xla#20440"),
)


def by_name(name: str) -> Program:
    for p in REGRESSIONS:
        if p.name == name:
            return p
    raise KeyError(f"no XLA regression program {name!r}; known: {[p.name for p in REGRESSIONS]}")


def write_dumps(pythons: list[str], out: Path = PROGRAMS_DIR, only=()) -> list[str]:
    """Dump each program with each Python into ``out/NAME-jaxVERSION``; one line per dump."""
    lines = []
    for p in (by_name(n) for n in only) if only else REGRESSIONS:
        for python in pythons:
            with tempfile.TemporaryDirectory() as tmp:
                facts = dump(p, Path(tmp) / "dump", python)
                folder = out / f"{p.name}-jax{facts['jax']}"
                if folder.exists():
                    shutil.rmtree(folder)
                shutil.copytree(Path(tmp) / "dump", folder)
            (folder / "program.json").write_text(program_json(p, facts))
            lines.append(f"{folder.name}: jax {facts['jax']}, jaxlib {facts['jaxlib']}, compiled result "
                         f"{'matches' if facts['matches_eager'] else 'DIFFERS FROM'} eager")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", required=True, metavar="PYTHON",
                        help="a Python with one jax release (give one --python per release)")
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help="dump only these programs")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    args = parser.parse_args(argv)
    try:
        for name in args.only:
            by_name(name)
    except KeyError as e:
        parser.error(str(e.args[0]))
    for line in write_dumps(args.python, args.out, args.only):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
