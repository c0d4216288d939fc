"""Which of the kernels' own argument checks verify's device cases catch, each planted as `pass` in turn.

    python benchmarks/kernel_checks_reached.py [--sites FILE:LINE ...] [--seed N]

A kernel check is a ``raise fail(...)`` in impl/device/kernels/*.py (found with ast). One at a time, the
script recompiles the module-level function holding it with that raise turned into ``pass`` and puts the
copy in place of the original wherever the kernels' modules and their tables (the KERNELS registry) hold
it, runs verify's device cases (the fixed device probes of ``zcspec verify --kinds device``) and judges
them, then puts the original back (also when the run fails). A line per check says what reported it: the
claims broken and on which op (the probe task's name), a crash (an exception escaping the device cases,
which fails verify as well) or nothing. Each check is planted twice: with the probes as verify draws them,
and with the refused oracle steps (``device_probes.refused_steps``: one malformed node per check that
onnxruntime refuses too) left out, the probes as they were before those steps existed.

A check nothing catches is mostly one whose fault numpy refuses inside the kernel anyway, which the spec
cannot tell from the check (docs/checker.md). The unplanted code runs first and must be clean in both
forms: exits 1 when it is not, 2 when a site cannot be planted; 0 otherwise.
"""
from __future__ import annotations

import __future__
import argparse
import ast
import collections
import contextlib
import importlib
import pkgutil
import re
import sys
import time
from pathlib import Path

import attrs

from zcspec.checks.scenario import evaluate
from zcspec.checks.strategies import device_probes
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import device_cases
from zcspec.impl.device import kernels

ROOT = Path(__file__).resolve().parents[1]
# A device probe's violation names its kernel task as 'probe <step> <op type>'.
PROBE_TASK = re.compile(r"\(task 'probe \d+ (\w+)'")
MODES = ("all", "left out")   # the probes as verify draws them; without the refused oracle steps


@attrs.frozen
class Site:
    """One ``raise fail(...)``: its module (under impl/device/kernels), line and module-level function."""

    module: str
    line: int
    function: str

    @property
    def label(self) -> str:
        return f"{self.module}.py:{self.line}"


@attrs.frozen
class Verdict:
    """What one run of the device cases reported: (claim, op type) -> violations, or the crash."""

    found: tuple[tuple[tuple[str, str], int], ...] = ()
    crash: str = ""

    @property
    def caught(self) -> bool:
        return bool(self.found or self.crash)

    def __str__(self) -> str:
        if self.crash:
            return f"crash: {self.crash}"
        if not self.found:
            return "nothing"
        ops = collections.defaultdict(list)
        for (claim, op), n in self.found:
            ops[claim].append(f"{op} x{n}")
        return "; ".join(f"{claim} ({', '.join(on)})" for claim, on in ops.items())


def _is_check(node: ast.AST) -> bool:
    return (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "fail")


def kernel_modules() -> dict[str, object]:
    """Module name -> module, for every module of the kernels package."""
    return {m.name: importlib.import_module(f"{kernels.__name__}.{m.name}")
            for m in sorted(pkgutil.iter_modules(kernels.__path__), key=lambda m: m.name)}


def find_sites(modules: dict[str, object]) -> list[Site]:
    """Every kernel check, in file and line order. A check outside a module-level function cannot be
    planted by recompiling its function: ValueError names it."""
    found = []
    for name, module in modules.items():
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        planted = set()
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef):
                for node in ast.walk(fn):
                    if _is_check(node):
                        found.append(Site(name, node.lineno, fn.name))
                        planted.add(node.lineno)
        stray = [n.lineno for n in ast.walk(tree) if _is_check(n) and n.lineno not in planted]
        if stray:
            raise ValueError(f"{name}.py: raise fail(...) at line(s) {stray} is outside a module-level function")
    return sorted(found, key=lambda s: (s.module, s.line))


class _Unraise(ast.NodeTransformer):
    """Turns the check at ``line`` into ``pass``."""

    def __init__(self, line: int):
        self.line, self.done = line, False

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if node.lineno == self.line and _is_check(node):
            self.done = True
            return ast.copy_location(ast.Pass(), node)
        return node


def _without_check(module, site: Site):
    """``site``'s function recompiled without the check, in ``module``'s globals (undecorated: the
    original stays registered, and is swapped for this copy where it is held)."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == site.function)
    unraise = _Unraise(site.line)
    fn = unraise.visit(fn)
    if not unraise.done:
        raise ValueError(f"{site.label}: no raise fail(...) in {site.function}()")
    fn.decorator_list = []
    code = compile(ast.fix_missing_locations(ast.Module([fn], [])), module.__file__, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    local: dict = {}
    exec(code, vars(module), local)
    return local[site.function]


@contextlib.contextmanager
def planted(modules: dict[str, object], site: Site):
    """``site``'s check is ``pass`` inside the block: the function holding it is replaced in every kernels
    module (the package too) and in every dict a module holds (KERNELS). Everything is put back on exit."""
    old = getattr(modules[site.module], site.function)
    new = _without_check(modules[site.module], site)
    undo = []
    try:
        for module in (kernels, *modules.values()):
            for key, value in list(vars(module).items()):
                if value is old:
                    setattr(module, key, new)
                    undo.append(lambda m=module, k=key: setattr(m, k, old))
                elif isinstance(value, dict):
                    for k, v in list(value.items()):
                        if v is old:
                            value[k] = new
                            undo.append(lambda d=value, k=k: d.__setitem__(k, old))
        yield
    finally:
        for put_back in reversed(undo):
            put_back()


@contextlib.contextmanager
def refused_steps_left_out(leave_out: bool):
    """Inside the block the device probes are drawn without the refused oracle steps when ``leave_out``."""
    original = device_probes.refused_steps
    if leave_out:
        device_probes.refused_steps = lambda rng: []
    try:
        yield
    finally:
        device_probes.refused_steps = original


def run_cases(cases) -> Verdict:
    """Judge every device case; a crash stops the run (verify fails on it) and is the verdict."""
    found = collections.Counter()
    label = ""
    try:
        for label, scenario in cases:
            for report in evaluate(scenario):
                for v in report.violations:
                    m = PROBE_TASK.search(str(v))
                    found[(v.invariant_id, m.group(1) if m else "?")] += 1
    except Exception as e:   # the code under test crashed: verify records it as an error
        text = " ".join(str(e).split())
        return Verdict(crash=f"{type(e).__name__} in {label}: {text[:90]}")
    return Verdict(found=tuple(sorted(found.items())))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sites", nargs="*", default=(), metavar="FILE:LINE",
                    help="only these checks (e.g. indexing.py:85; default every raise fail(...))")
    ap.add_argument("--seed", type=int, default=0, help="verify's seed, which draws the probes (default 0)")
    args = ap.parse_args(argv)
    modules = kernel_modules()
    try:
        sites = find_sites(modules)
    except ValueError as e:
        print(f"kernel_checks_reached: {e}", file=sys.stderr)
        return 2
    unknown = set(args.sites) - {s.label for s in sites}
    if unknown:
        print(f"kernel_checks_reached: no kernel check at {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    chosen = [s for s in sites if not args.sites or s.label in args.sites]
    registry = dict(kernels.KERNELS)
    config = VerifyConfig(models=(), kinds=("device",), seed=args.seed, examples=0, proofs=False, corpus=False)
    verdicts: dict[tuple[Site, str], Verdict] = {}
    start = time.perf_counter()
    for mode in MODES:
        with refused_steps_left_out(mode == "left out"):
            cases = list(device_cases(config))
            clean = run_cases(cases)
            if clean.caught:
                print(f"the unplanted code is not clean ({mode}): {clean}")
                return 1
            for i, site in enumerate(chosen, 1):
                began = time.perf_counter()
                try:
                    with planted(modules, site):
                        verdicts[site, mode] = run_cases(cases)
                except ValueError as e:
                    print(f"kernel_checks_reached: {e}", file=sys.stderr)
                    return 2
                print(f"[{mode} {i}/{len(chosen)}] {site.label}: {verdicts[site, mode]} "
                      f"({time.perf_counter() - began:.1f} s)", file=sys.stderr, flush=True)
    assert kernels.KERNELS == registry, "a planted kernel was not put back"
    print(f"verify's device cases ({len(cases)} probes, seed {args.seed}) with each kernel check of "
          f"impl/device/kernels planted as `pass`, one at a time, in {time.perf_counter() - start:.0f} s")
    print("\n| check | in | caught by the device cases | with the refused oracle steps left out |\n|---|---|---|---|")
    for site in chosen:
        print(f"| {site.label} | {site.function} | {verdicts[site, 'all']} | {verdicts[site, 'left out']} |")
    caught = {mode: [s for s in chosen if verdicts[s, mode].caught] for mode in MODES}
    crashed = {mode: [s for s in chosen if verdicts[s, mode].crash] for mode in MODES}
    print(f"\n{len(caught['all'])} of {len(chosen)} kernel checks caught by verify's device cases "
          f"({len(caught['left out'])} with the refused oracle steps left out); by a crash: "
          f"{len(crashed['all'])} of the {len(caught['all'])} ({len(crashed['left out'])} of the "
          f"{len(caught['left out'])}), by a claim the rest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
