"""CompileOptions: everything ``compile(graph, options)`` lets a caller choose.

The SoC profile decides what the passes and the planner must respect (which
task kinds can be refreshed, whether zero copy exists at all, granularities);
``plan_options()`` derives the planner's options from it.
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.platform.soc import SocProfile, get_soc


@attrs.frozen
class CompileOptions:
    """- ``soc``: SoC profile name (impl/platform/soc.py).
    - ``strategy``: memory planning strategy, ``ge`` (default) or ``compact``.
    - ``reuse``: memory reuse on (False = GE's ``ge.exec.disableReuseMemory=1``).
    - ``offline``: an ATC-style offline build; GE then also inserts a
      MemcpyAddrAsync between a Data node and the NetOutput it feeds (GE: memcpy_addr_async_pass.cc
      ``NeedInsertMemAddrAsyncNodeAfterData``).
    - ``single_op``: a single-op build (GE's ``ATTR_SINGLE_OP_SCENE`` on the graph): as offline,
      a Data feeding the NetOutput gets a MemcpyAddrAsync (``NeedInsertMemAddrAsyncNodeAfterData``).
    - ``disabled_passes``: names of passes to skip (see ``passes.PIPELINE``).
    """

    soc: str = "ascend910b"
    strategy: str = "ge"
    reuse: bool = True
    offline: bool = False
    single_op: bool = False
    disabled_passes: frozenset = attrs.field(default=frozenset(), converter=frozenset)

    @property
    def profile(self) -> SocProfile:
        return get_soc(self.soc)

    def plan_options(self) -> PlanOptions:
        p = self.profile
        return PlanOptions(
            strategy=self.strategy, reuse=self.reuse, block_align=p.mem_align,
            size_align=p.tensor_align, size_padding=p.padding, no_zero_copy_ops=p.hccl_no_zero_copy,
        )
