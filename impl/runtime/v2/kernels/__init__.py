"""The kernel table of runtime v2: execution-graph node type -> ``fn(frame, node, args) -> outputs``.

One small function per kernel (STYLE.md: a registry is a table). ``args`` are the values of
the node's data inputs in order; the function returns a tuple with one value per output.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.kernels import io, launch, memory, outputs

KERNELS = {**io.KERNELS, **memory.KERNELS, **outputs.KERNELS, **launch.KERNELS}
