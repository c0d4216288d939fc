"""Export torchvision architectures with seeded random weights to ONNX (needs torch and torchvision only).

Each model is built with ``weights=None`` after ``torch.manual_seed(0)`` and exported in eval mode
for a fixed 1x3x224x224 input ``x`` (output ``logits``) by torch's dynamo exporter (opset 18),
falling back to the TorchScript exporter (opset 17) if the dynamo one fails.

torchvision's initialisation alone gives degenerate logits, which would make a comparison against
onnxruntime say little: BatchNorm's running statistics stay at mean 0 / variance 1, so in eval mode
MobileNetV3's logits come out near 1e-9 and EfficientNet-B0's near 1e-14, and the ViT head is
zero-initialised, so its logits are all 0. Two seeded steps fix that: the BatchNorm statistics are
calibrated on a few seeded random batches (train mode, cumulative average, no gradient), and every
parameter torchvision initialised to all zeros with rank >= 2 (the ViT head) is drawn from N(0, 0.02).
The weights stay random; the logits are O(1).

    python benchmarks/torchvision_export.py DIR [resnet50 mobilenet_v3_small ...]

``benchmarks/torchvision_models.py`` runs this script (with ``--torch-python`` when torch lives in
another environment) for the models missing from its directory.
"""
from __future__ import annotations

import argparse
import os

import torch
import torchvision

MODELS = ("resnet18", "resnet50", "mobilenet_v3_small", "efficientnet_b0", "vit_b_16")
SHAPE = (1, 3, 224, 224)


def seeded_model(name: str) -> torch.nn.Module:
    """torchvision's ``name`` with seeded random weights, BatchNorm calibrated, in eval mode."""
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim >= 2 and not p.any():
                p.normal_(0.0, 0.02)
        norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        if norms:
            for m in norms:
                m.reset_running_stats()
                m.momentum = None   # cumulative average over the calibration batches
            model.train()
            for _ in range(4):
                model(torch.randn(8, *SHAPE[1:]))
    return model.eval()


def export(name: str, path: str) -> str:
    """Write ``name`` to ``path``; the exporter that succeeded."""
    model = seeded_model(name)
    x = torch.randn(*SHAPE)
    try:
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["logits"],
                          opset_version=18, dynamo=True, external_data=False)
        return "dynamo"
    except Exception as e:   # noqa: BLE001 - any exporter failure: try the other exporter
        print(f"{name}: dynamo exporter failed ({type(e).__name__}: {str(e)[:200]}), using TorchScript")
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["logits"],
                          opset_version=17, dynamo=False)
        return "torchscript"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    for name in args.models:
        print(f"{name}: {export(name, os.path.join(args.dir, name + '.onnx'))}", flush=True)


if __name__ == "__main__":
    main()
