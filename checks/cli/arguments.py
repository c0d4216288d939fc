"""Arguments several subcommands share: MODEL and ``--shape`` (loaded by ``zcspec.checks.models``), and
numbers with a floor (``--max-ratio``, ``--threshold``)."""
from __future__ import annotations

import argparse


def number_at_least(floor: float, example: str):
    """An argparse ``type``: a number >= ``floor``; anything else is argparse's usage error (exit 2)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value >= floor:
            raise argparse.ArgumentTypeError(f"{text!r}: give a number of at least {floor:g}, e.g. {example}")
        return value
    return parse


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
