"""CompileOptions: everything ``compile(graph, options)`` lets a caller choose.

The SoC profile decides what the passes and the planner must respect (which
task kinds can be refreshed, whether zero copy exists at all, granularities);
``plan_options()`` derives the planner's options from it.
"""
from __future__ import annotations

from collections.abc import Mapping

import attrs

from zcspec.impl.compiler.artefact_json import from_json
from zcspec.impl.compiler.errors import OptionError
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
    - ``feature_base_refreshable``: GE's ``ge.featureBaseRefreshable=1``, which GE reads at build time
      too: the feature map will be re-based after load, so an HCCL op counts as address-refreshable
      and the memory-layout conflict optimizer puts no copy between user memory and it
      (mem_layout_conflict_util.cc ``IsAddressRefreshable``, passes/mem_layout_conflict.py). GE's
      MemcpyAddrAsyncPass then also skips its RefData -> HCCL copy, a rule zcspec's IR (no RefData)
      has no counterpart of. The load-time switch of runtime v1 is separate
      (``LoadOptions.feature_base_refreshable``).
    - ``disabled_passes``: names of passes to skip (see ``passes.PIPELINE``).
    """

    soc: str = "ascend910b"
    strategy: str = "ge"
    reuse: bool = True
    offline: bool = False
    single_op: bool = False
    feature_base_refreshable: bool = False
    disabled_passes: frozenset = attrs.field(default=frozenset(), converter=frozenset)

    def __attrs_post_init__(self):
        """Each field of its type, an OptionError naming it otherwise (``reuse="yes"`` compiled as reuse on)."""
        for f in attrs.fields(CompileOptions):
            value = getattr(self, f.name)
            if f.type == "bool" and not isinstance(value, bool):
                raise OptionError(f.name, value, "must be True or False")
            if f.type == "str" and not isinstance(value, str):
                raise OptionError(f.name, value, "must be a name (a string)")
        if not all(isinstance(p, str) for p in self.disabled_passes):
            raise OptionError("disabled_passes", sorted(map(repr, self.disabled_passes)), "must be pass names")

    @property
    def profile(self) -> SocProfile:
        return get_soc(self.soc)

    def plan_options(self) -> PlanOptions:
        p = self.profile
        return PlanOptions(
            strategy=self.strategy, reuse=self.reuse, block_align=p.mem_align,
            size_align=p.tensor_align, size_padding=p.padding, no_zero_copy_ops=p.hccl_no_zero_copy,
        )


# Fields CompileOptions gained after model files and scenarios with its JSON form were first written,
# with the value every file written before means: such a build had no way to ask for anything else.
ADDED_LATER = {"feature_base_refreshable": False}


def options_from_json(data, where: str = "options") -> CompileOptions:
    """The CompileOptions of their JSON form (the artefacts' strict codec: every other field present, no
    unknown key, each of its type); a field of ``ADDED_LATER`` that is absent takes the value a file
    written before it existed means, so those files still load."""
    if isinstance(data, Mapping):
        data = {**{k: v for k, v in ADDED_LATER.items() if k not in data}, **data}
    return from_json(CompileOptions, data, where)
