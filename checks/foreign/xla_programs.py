"""The XLA programs whose dumps zcspec keeps (checks/foreign/programs/xla/), and how to remake them.

Each program is a small jax function with its arguments, what its plan should show (``clean``, or
the claim a known XLA bug breaks, with the bug's issue), and what it exercises. ``write_dumps``
compiles each with XLA's dump flags in a child process and keeps, of the module that ran, the four
text files the reader needs (checks/foreign/xla_dump.py), plus ``program.json`` saying what to
expect and what jax and jaxlib made it. Remaking the dumps needs the ``xla`` extra (jax); reading
them needs nothing:

    python -m zcspec.checks.foreign.xla_programs [--only NAME ...] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import attrs

from zcspec.checks.foreign.xla_dump import SUFFIXES

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "xla"


@attrs.frozen
class Program:
    name: str
    what: str
    source: str          # a jax program: defines ``f``, ``args`` and optional ``donate``
    expect: str = "clean"            # or the id of the claim the plan breaks
    issue: str = ""                  # the known bug, for a program that is not clean
    xla_flags: str = ""              # XLA flags beyond the dump's, e.g. a workaround a bug's issue names


PROGRAMS = (
    Program("mlp-train-step", "one SGD step of a 3-layer MLP (value_and_grad): in-place parameter updates", """
        import jax, jax.numpy as jnp
        def loss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = params[-1]
            return jnp.mean((h @ w + b - y) ** 2)
        def f(params, x, y):
            value, g = jax.value_and_grad(loss)(params, x, y)
            return value, jax.tree.map(lambda p, d: p - 0.01 * d, params, g)
        sizes = [32, 64, 64, 10]
        args = ([(jnp.full((a, b), 0.01), jnp.zeros((b,))) for a, b in zip(sizes[:-1], sizes[1:])],
                jnp.ones((16, 32)), jnp.ones((16, 10)))
    """),
    Program("scan-carry", "lax.scan: a while loop whose carry and stacked outputs share buffers across the body", """
        import jax, jax.numpy as jnp
        from jax import lax
        def f(c, xs):
            def body(carry, x):
                carry = jnp.tanh(carry * x + 1.0)
                return carry, carry * 2
            return lax.scan(body, c, xs)
        args = (jnp.ones((8,)), jnp.ones((5, 8)))
    """),
    Program("two-conds", "two sequential lax.cond calls: branch results handed through the conditionals", """
        import jax, jax.numpy as jnp
        from jax import lax
        def f(p, x):
            y = lax.cond(p, lambda v: jnp.sin(v) * 3, lambda v: jnp.cos(v) + 1, x)
            z = lax.cond(p, lambda v: v @ v.T, lambda v: v.T @ v, y)
            return y, z
        args = (True, jnp.ones((8, 8)))
    """),
    Program("donated-update", "a dynamic_update_slice into a donated buffer, then an in-place add", """
        import jax, jax.numpy as jnp
        from jax import lax
        def f(buf, x, i):
            buf = lax.dynamic_update_slice(buf, jnp.sin(x), (i, 0))
            return buf + 1.0
        args = (jnp.zeros((16, 8)), jnp.ones((4, 8)), 3)
        donate = (0,)
    """),
    Program("concat-tail", "concatenations feeding reductions and an elementwise tail", """
        import jax, jax.numpy as jnp
        def f(x, w):
            h = jnp.tanh(x @ w)
            h2 = jnp.concatenate([h, h * 2, jnp.exp(h)], axis=1)
            return h2.sum(axis=0), jnp.exp(h) * h
        args = (jnp.ones((8, 16)), jnp.ones((16, 16)))
    """),
    # Copies of the buffer's own rows in place: where the rows read and the rows written do not
    # overlap the in-place fusion is safe; shifted by one row it is openxla/xla#49176.
    Program("copy-rows-apart", "rows 0-1 copied over rows 2-3 of the same buffer, in place (no read is overwritten)", """
        import numpy as np, jax
        from jax import lax
        def f(x):
            base = x + np.int32(1)
            return lax.dynamic_update_slice(base, base[:2], (2, 0, 0)).reshape((1, 4, 1))
        args = (np.arange(4, dtype=np.int32).reshape(4, 1, 1),)
    """),
    Program("copy-block-apart", "an 8-row block copied over the buffer's second half, in place, in float32", """
        import numpy as np, jax
        from jax import lax
        def f(x):
            base = x * np.float32(2)
            return lax.dynamic_update_slice(base, base[:8], (8, 0, 0)).reshape((1, 16, 3))
        args = (np.arange(48, dtype=np.float32).reshape(16, 1, 3),)
    """),
    Program("copy-rows-apart-int64", "rows 0-2 copied over rows 5-7, in place, in int64", """
        import numpy as np, jax
        jax.config.update("jax_enable_x64", True)
        from jax import lax
        def f(x):
            base = x + np.int64(3)
            return lax.dynamic_update_slice(base, base[:3], (5, 0, 0)).reshape((1, 8, 1))
        args = (np.arange(8, dtype=np.int64).reshape(8, 1, 1),)
    """),
    Program("shift-rows-in-place", "rows 0-2 shifted down by one row in place: the reproducer of openxla/xla#49176", """
        import numpy as np, jax
        from jax import lax
        def f(x):
            base = x + np.int32(1)
            return lax.dynamic_update_slice(base, base[:3], (1, 0, 0)).reshape((1, 4, 1))
        args = (np.arange(4, dtype=np.int32).reshape(4, 1, 1),)
    """, expect="LAYOUT-IN-PLACE-READS", issue="openxla/xla#49176"),
)

_RUNNER = """
import sys, json
import numpy as np, jax
{source}
donate = globals().get("donate", ())
with jax.disable_jit():
    want = jax.tree.map(np.asarray, f(*args))
out = jax.jit(f, donate_argnums=donate)(*args)
same = all(np.array_equal(np.asarray(a), np.asarray(b)) or np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5)
           for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(want)))
import jaxlib
print(json.dumps({{"jax": jax.__version__, "jaxlib": jaxlib.__version__, "matches_eager": bool(same)}}))
"""


def by_name(name: str) -> Program:
    for p in PROGRAMS:
        if p.name == name:
            return p
    raise KeyError(f"no XLA program {name!r}; known: {[p.name for p in PROGRAMS]}")


def dump(program: Program, folder: Path, python: str = sys.executable) -> dict:
    """Run ``program`` under XLA's dump flags in a child process; copy the module that ran (the one
    named ``jit_f``) into ``folder``. Returns what the run printed (versions, whether the compiled
    result matched eager execution)."""
    with tempfile.TemporaryDirectory() as tmp:
        flags = f"--xla_dump_to={tmp} --xla_dump_hlo_as_text {program.xla_flags}".strip()
        env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
        code = _RUNNER.format(source=textwrap.dedent(program.source))
        run = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        if run.returncode:
            raise RuntimeError(f"program {program.name!r} failed:\n{run.stderr[-2000:]}")
        facts = json.loads(run.stdout.strip().splitlines()[-1])
        stems = sorted(f.name[: -len(SUFFIXES[0])] for f in Path(tmp).iterdir()
                       if f.name.endswith(SUFFIXES[0]) and ".jit_f." in f.name)
        if len(stems) != 1:
            raise RuntimeError(f"program {program.name!r}: expected one jit_f module in the dump, found {stems}")
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.txt"):
            old.unlink()
        for suffix in SUFFIXES:   # a stable name: the module number depends on what else jax compiled
            # jaxlib 0.4.36 to 0.7.2 print the values and live ranges into the buffer-assignment file.
            if (Path(tmp) / f"{stems[0]}{suffix}").is_file():
                shutil.copy(Path(tmp) / f"{stems[0]}{suffix}", folder / f"jit_f.cpu_after_optimizations{suffix}")
    return facts


def program_json(program: Program, facts: dict) -> str:
    """The ``program.json`` of a dump: what the program is and must show, and what made it."""
    meta = {"program": program.name, "what": program.what, "expect": program.expect, "issue": program.issue, **facts}
    if program.xla_flags:
        meta["xla_flags"] = program.xla_flags
    return json.dumps(meta, indent=1, sort_keys=True) + "\n"


def write_dumps(out: Path = PROGRAMS_DIR, only=(), python: str = sys.executable) -> list[str]:
    lines = []
    for p in PROGRAMS:
        if only and p.name not in only:
            continue
        facts = dump(p, out / p.name, python)
        (out / p.name / "program.json").write_text(program_json(p, facts))
        lines.append(f"{p.name}: jax {facts['jax']}, compiled result {'matches' if facts['matches_eager'] else 'DIFFERS FROM'} eager")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help="remake only these programs")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    parser.add_argument("--python", default=sys.executable, help="the Python that has jax (default: this one)")
    args = parser.parse_args(argv)
    for line in write_dumps(args.out, args.only, args.python):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
