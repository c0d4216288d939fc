"""Arguments several subcommands share: MODEL and ``--shape`` (loaded by ``zcspec.checks.models``)."""
from __future__ import annotations


def add_model_arguments(parser, *, nargs=None) -> None:
    parser.add_argument("model", metavar="MODEL", nargs=nargs, help="an .onnx file, a zcspec graph .json, or zoo:NAME (e.g. zoo:resnet50)")
    parser.add_argument(
        "--shape", action="append", default=[], metavar="NAME=DIMS",
        help="fix a dynamic input's shape, e.g. --shape data=1x3x224x224 (repeatable)",
    )
    parser.add_argument(
        "--value", action="append", default=[], metavar="NAME=V[,V...]",
        help="freeze an ONNX input to a constant, so control flow that depends on it folds away, "
             "e.g. --value sr=16000 (repeatable)",
    )
