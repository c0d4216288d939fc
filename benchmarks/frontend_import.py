"""Import time and peak Python memory of the ONNX front end on the 9 ONNX light models.

    python benchmarks/frontend_import.py [--summary]

Prints one row per model: nodes before/after folding, weights (count, bytes), best-of-3
wall time of ``load_onnx`` and the peak traced allocation of one import. The weight bytes
are the models' full sizes; the peak shows they are never materialised (splat weights).

``--summary`` times instead the whole command ``zcspec summary zoo:NAME`` for each model (a new
process each, best of 3, end to end), beside what a process costs before zcspec does anything:
the interpreter alone (``python -c pass``) and the interpreter importing onnx.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import tracemalloc

import onnx

from zcspec.checks.zoo import LIGHT
from zcspec.impl.compiler.frontend.onnx_import import load_onnx

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def measure(name: str) -> dict:
    path = os.path.join(LIGHT_DIR, f"light_{name}.onnx")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        graph = load_onnx(path)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    load_onnx(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"model": name, "onnx_nodes": len(onnx.load(path).graph.node), "ir_nodes": len(graph.nodes),
            "weights": len(graph.weights), "weight_bytes": graph.weight_bytes(),
            "seconds": min(times), "peak_mib": peak / 2**20}


def _best_of_3(argv: list[str]) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def summary() -> None:
    zcspec = os.path.join(os.path.dirname(sys.executable), "zcspec")
    zcspec = zcspec if os.path.exists(zcspec) else shutil.which("zcspec")
    if zcspec is None:
        raise SystemExit("frontend_import.py --summary: no zcspec command next to this python or on PATH")
    print(f"seconds end to end, best of 3 (load average (1 min) {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores)")
    rows = [("python -c pass", [sys.executable, "-c", "pass"]),
            ("python -c 'import onnx'", [sys.executable, "-c", "import onnx"])]
    rows += [(f"zcspec summary zoo:{name}", [zcspec, "summary", f"zoo:{name}"]) for name in LIGHT]
    for label, argv in rows:
        print(f"{label:<34} {_best_of_3(argv):6.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", action="store_true", help="time `zcspec summary zoo:NAME` end to end instead")
    if ap.parse_args(argv).summary:
        summary()
        return
    print(f"{'model':<14} {'onnx nodes':>10} {'IR nodes':>9} {'weights':>8} {'weight bytes':>14} {'import s':>9} {'peak MiB':>9}")
    for name in LIGHT:
        r = measure(name)
        print(f"{r['model']:<14} {r['onnx_nodes']:>10} {r['ir_nodes']:>9} {r['weights']:>8} "
              f"{r['weight_bytes']:>14,} {r['seconds']:>9.3f} {r['peak_mib']:>9.1f}")


if __name__ == "__main__":
    main()
