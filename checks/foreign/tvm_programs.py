"""The TVM Relax programs zcspec keeps (checks/foreign/programs/tvm/), and how to remake them.

Each program is a Relax module written in TVMScript, with the inputs to run it on and a NumPy
reference of what it computes. ``write_programs`` compiles each with TVM's default Relax build
(``tvm.compile(mod, target="llvm")``) in a child process of a Python that has TVM, keeps the
Relax functions as that build printed them right after ``relax.transform.StaticPlanBlockMemory``
(``relax.txt``, what checks/foreign/tvm_relax.py reads), runs the compiled module on each input in
a child process of its own (a crash is recorded, not fatal) against the reference, and writes
``program.json``. Each program names the TVM release it is made with (``tvm``): a bug fixed in a
later release is kept as the release before the fix made it. Give the Pythons of one environment
per release (pip's ``apache-tvm``; 0.26.0 and 0.27.0.post1 use apache-tvm-ffi 0.1.15):

    python -m zcspec.checks.foreign.tvm_programs --python /venv-0.27/bin/python /venv-0.26/bin/python [--only NAME ...]

Reading the kept files needs nothing.
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import attrs

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "tvm"
FIXED = "0.27.0.post1"      # the first wheel with apache/tvm#20220 (the fix of #20190)
BEFORE_FIX = "0.26.0"


@attrs.frozen
class Program:
    name: str
    what: str
    source: str            # defines ``Module`` (an IRModule with a Relax ``main``), ``inputs`` and ``reference``
    tvm: str = FIXED       # the release it is made with
    expect: str = "clean"  # or the id of the claim the plan breaks
    issue: str = ""
    also: tuple[str, ...] = ()   # claims the bug breaks as a consequence of ``expect`` (programs.py)


_MATCH_CAST = """
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((5, 8), "float32")) -> R.Tensor((5, 8), "float32"):
            with R.dataflow():
                src = R.add(x, R.const(0.25, "float32"))
                left = R.match_cast(src, R.Tensor((5, 8), "float32"))
                right = R.add(x, R.const(0.125, "float32"))
                out = R.add(left, right)
                R.output(out)
            return out
    inputs = {"x": (np.linspace(-1, 1, 40, dtype="float32").reshape(5, 8),)}
    def reference(x):
        return (x + 0.25) + (x + 0.125)
"""

PROGRAMS = (
    Program("chain", "five element-wise ops in a row: each storage reused two steps later", """
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((4, 16), "float32")) -> R.Tensor((4, 16), "float32"):
                with R.dataflow():
                    a = R.multiply(x, R.const(2.0, "float32"))
                    b = R.add(a, R.const(1.0, "float32"))
                    c = R.multiply(b, b)
                    d = R.subtract(c, a)
                    e = R.exp(R.negative(d))
                    R.output(e)
                return e
        inputs = {"x": (np.linspace(-1, 1, 64, dtype="float32").reshape(4, 16),)}
        def reference(x):
            a = x * 2
            b = a + 1
            return np.exp(-(b * b - a))
    """),
    Program("reshape-view", "a reshape in a dataflow block: a view of its operand's storage, read after a later op", """
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((8, 4), "float32"):
                with R.dataflow():
                    a = R.add(x, R.const(1.0, "float32"))
                    v = R.reshape(a, R.shape([8, 4]))
                    b = R.multiply(v, R.const(2.0, "float32"))
                    c = R.add(b, v)
                    R.output(c)
                return c
        inputs = {"x": (np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8),)}
        def reference(x):
            v = (x + 1).reshape(8, 4)
            return v * 2 + v
    """),
    Program("branch", "an if whose true branch reuses a storage the function allocated before it", """
        @I.ir_module
        class Module:
            @R.function
            def main(cond: R.Tensor((), "bool"), x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
                a = R.multiply(x, R.const(3.0, "float32"))
                b = R.add(a, x)
                if cond:
                    t1 = R.multiply(x, R.const(2.0, "float32"))
                    t2 = R.add(t1, R.const(1.0, "float32"))
                    r = R.multiply(t2, t1)
                else:
                    r = R.subtract(x, R.const(1.0, "float32"))
                c = R.subtract(r, b)
                return c
        x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
        inputs = {"cond=True": (np.array(True), x), "cond=False": (np.array(False), x)}
        def reference(cond, x):
            r = (x * 2 + 1) * (x * 2) if cond else x - 1
            return r - (x * 3 + x)
    """),
    Program("match-cast-alias", "an alias made by match_cast, read after a later op: the reproducer of apache/tvm#20190",
            _MATCH_CAST, tvm=BEFORE_FIX, expect="LAYOUT-NO-OVERLAP", issue="apache/tvm#20190",
            also=("LAYOUT-LOWER-BOUND",)),
    Program("match-cast-alias-fixed", "the reproducer of apache/tvm#20190 built by the release with its fix "
            "(apache/tvm#20220)", _MATCH_CAST, issue="apache/tvm#20190, fixed by apache/tvm#20220"),
    Program("reshape-chain-branches", "a chain of two reshapes in each branch of an if: the reproducer of "
            "apache/tvm#20191 (open)", """
        @I.ir_module
        class Module:
            @R.function
            def main(cond: R.Tensor((), "bool"), x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
                if cond:
                    flat = R.reshape(x, R.shape([32]))
                    r = R.reshape(flat, R.shape([4, 8]))
                else:
                    flat2 = R.reshape(x, R.shape([32]))
                    r = R.reshape(flat2, R.shape([4, 8]))
                return r
        x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
        inputs = {"cond=True": (np.array(True), x), "cond=False": (np.array(False), x)}
        def reference(cond, x):
            return x
    """, expect="LAYOUT-ARENA-ALLOCATED", issue="apache/tvm#20191"),
)

_CHILD = """
import json, sys
import numpy as np, tvm
from tvm import relax
from tvm.script import ir as I, relax as R
{source}
kept = []

@tvm.instrument.pass_instrument
class _Keep:
    def run_after_pass(self, mod, info):
        if info.name == "StaticPlanBlockMemory":
            kept.extend(f.script() for gv, f in sorted(mod.functions_items(), key=lambda kv: kv[0].name_hint)
                        if isinstance(f, relax.Function))

with tvm.transform.PassContext(instruments=[_Keep()]):
    ex = (getattr(tvm, "compile", None) or relax.build)(Module, target="llvm")
if sys.argv[1] == "print":
    print(json.dumps({{"tvm": tvm.__version__, "text": "\\n".join(kept), "inputs": list(inputs)}}))
else:
    args = inputs[sys.argv[1]]
    vm = relax.VirtualMachine(ex, tvm.cpu())
    wrap = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    out = vm["main"](*[wrap(a) for a in args]).numpy()
    print(json.dumps({{"max_abs_diff": float(np.abs(out - reference(*args)).max())}}))
"""


def by_name(name: str) -> Program:
    for p in PROGRAMS:
        if p.name == name:
            return p
    raise KeyError(f"no TVM program {name!r}; known: {[p.name for p in PROGRAMS]}")


def tvm_version(python: str) -> str:
    run = subprocess.run([python, "-c", "import tvm; print(tvm.__version__)"], capture_output=True, text=True,
                         timeout=300)
    if run.returncode:
        raise RuntimeError(f"{python} cannot import tvm: {run.stderr.strip()[-500:]}")
    return run.stdout.strip()


def _child(program: Program, python: str, mode: str) -> subprocess.CompletedProcess:
    # A file, not ``-c``: TVMScript's parser reads the class's source back with ``inspect``.
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{program.name.replace('-', '_')}.py"
        script.write_text(_CHILD.format(source=textwrap.dedent(program.source)))
        return subprocess.run([python, str(script), mode], capture_output=True, text=True, timeout=900)


def make(program: Program, folder: Path, python: str) -> dict:
    """Compile and run ``program`` with ``python``'s TVM; write ``relax.txt``; return program.json's facts."""
    printed = _child(program, python, "print")
    if printed.returncode:
        raise RuntimeError(f"program {program.name!r} failed to build:\n{printed.stderr[-2000:]}")
    facts = json.loads(printed.stdout.strip().splitlines()[-1])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "relax.txt").write_text(facts.pop("text") + "\n")
    runs = {}
    for label in facts.pop("inputs"):
        run = _child(program, python, label)
        if run.returncode < 0:
            runs[label] = f"crashed: {signal.Signals(-run.returncode).name}"
        elif run.returncode:
            runs[label] = f"failed: {run.stderr.strip().splitlines()[-1] if run.stderr.strip() else run.returncode}"
        else:
            runs[label] = json.loads(run.stdout.strip().splitlines()[-1])["max_abs_diff"]
    ok = all(isinstance(v, float) and v <= 1e-5 for v in runs.values())
    return {**facts, "runs": runs, "matches_reference": ok}


def write_programs(pythons: list[str], out: Path = PROGRAMS_DIR, only=()) -> list[str]:
    """Make every program (or ``only``) with the Python among ``pythons`` that has its TVM release."""
    versions = {tvm_version(p): p for p in reversed(pythons)}
    lines = []
    for p in PROGRAMS:
        if only and p.name not in only:
            continue
        if p.tvm not in versions:
            lines.append(f"{p.name}: skipped, needs apache-tvm=={p.tvm} (have {sorted(versions)}): give --python "
                         "of an environment with it")
            continue
        facts = make(p, out / p.name, versions[p.tvm])
        meta = {"program": p.name, "what": p.what, "expect": p.expect, "issue": p.issue, **facts}
        if p.also:
            meta["also"] = list(p.also)
        (out / p.name / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{p.name}: TVM {facts['tvm']}, runs {facts['runs']}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help="remake only these programs")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    parser.add_argument("--python", nargs="+", default=[sys.executable], metavar="PY",
                        help="Pythons that have TVM, one per release the programs need (default: this one)")
    args = parser.parse_args(argv)
    for line in write_programs(args.python, args.out, args.only):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
