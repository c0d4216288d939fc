"""The kernel library: ``KERNELS`` maps op type -> kernel (see ``common`` for the contract).

Importing this package registers every family module. HCCL collectives live in
``zcspec.impl.device.hccl.COLLECTIVES``; together the two tables cover every ``compute``
and ``hccl`` op of ``zcspec.impl.compiler.ops.OPS`` (a test checks it).
"""
from zcspec.impl.device.kernels import conv, copy, elementwise, merge, nn, pool, shape  # noqa: F401  (registration)
from zcspec.impl.device.kernels import activation, conv_transpose, indexing, norm, reduce, resize  # noqa: F401
from zcspec.impl.device.kernels import compare, recurrent  # noqa: F401  (registration)
from zcspec.impl.device.kernels.common import ACCUMULATES, KERNELS, Kernel

__all__ = ["ACCUMULATES", "KERNELS", "Kernel"]
