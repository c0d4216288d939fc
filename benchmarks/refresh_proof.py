"""What runtime v1's refresh proof costs: per ONNX light model, and in all in one ``zcspec verify``.

    python benchmarks/refresh_proof.py [MODEL ...] [--calls N] [--no-verify]

For each light model (or each MODEL named; default strategy, as verify proves it): the compile time (not part of the
proof), then ``prove_refresh`` timed end to end and split as the proof reports it: ``build s`` (loading
the model without its weights, binding buffers and the symbolic run of the refresh, ``calls`` calls
deep) and ``solve s`` (Z3), with the claims encoded and the verdict; ``load s`` is one more load of
the same weightless model on its own right after the proof, the part of ``build s`` that is loading. Then, unless
``--no-verify``, ``zcspec verify`` of the model-file kind alone (the zoo, no campaign, no corpus) and
the sum of its refresh proofs' own seconds (build + solve), with their count: the cost the proofs add
to a default verify, whose other model-file checks run either way. The 1-minute load average is
printed before and after. Exits 1 unless every proof is proved.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import attrs

from zcspec.checks.models import load_graph
from zcspec.checks.proofs.cases import REFRESH_CLAIM, REFRESH_STRATEGY
from zcspec.checks.proofs.refresh import prove_refresh
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.zoo import LIGHT, zoo_names
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.runtime.v1 import LoadOptions, load


def _load_s(model) -> float:
    """One load of ``model`` without its weights on a fresh device, as the proof loads it."""
    model = attrs.evolve(model, weights=())
    device = Device(model.soc, poison=False)
    start = time.perf_counter()
    lm = load(device, model, LoadOptions())
    seconds = time.perf_counter() - start
    lm.unload()
    device.close()
    return seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(LIGHT), help="light models (default: all 9)")
    ap.add_argument("--calls", type=int, default=2, help="execute calls the proof follows (default 2, as verify)")
    ap.add_argument("--no-verify", action="store_true", help="only the per-model table")
    args = ap.parse_args(argv)
    print(f"refresh proofs, {args.calls} calls, strategy {REFRESH_STRATEGY}; load average (1 min) "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print(f"{'model':14} {'compile s':>9} {'load s':>7} {'build s':>7} {'solve s':>7} {'proof s':>7} {'claims':>7}  status")
    ok = True
    for name in args.models:
        start = time.perf_counter()
        model = build_model(load_graph(f"zoo:{name}"), CompileOptions(strategy=REFRESH_STRATEGY))
        compile_s = time.perf_counter() - start
        start = time.perf_counter()
        proof = prove_refresh(model, calls=args.calls)
        proof_s = time.perf_counter() - start
        load_s = _load_s(model)
        ok &= proof.passed
        print(f"{name:14} {compile_s:9.2f} {load_s:7.3f} {proof.build_s:7.3f} {proof.solve_s:7.3f} {proof_s:7.3f} "
              f"{proof.claims_encoded:7}  {proof.status}")
    if not args.no_verify:
        config = VerifyConfig(models=zoo_names(), kinds=("model_file",), examples=0, corpus=False)
        start = time.perf_counter()
        result = verify(config)
        total = time.perf_counter() - start
        refresh = [p for _, p in result.proofs if hasattr(p, "claims_encoded")]
        ok &= all(p.passed for p in refresh) and not result.errors
        spent = sum(p.build_s + p.solve_s for p in refresh)
        print(f"zcspec verify, model files only ({len(config.models)} zoo entries, every strategy; "
              f"{REFRESH_CLAIM} on the default strategy's unmutated files):")
        print(f"  {len(refresh)} refresh proofs ({sum(p.passed for p in refresh)} proved): {spent:.1f} s of "
              f"proof (build {sum(p.build_s for p in refresh):.1f} s, solve {sum(p.solve_s for p in refresh):.1f} s) "
              f"in a run of {total:.1f} s")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.1f}")
    print(f"result: {'every proof proved' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
