"""Runtime v1 variants: the per-execution refresh, the size check and the HCCL rule, each broken once."""
from __future__ import annotations

from zcspec.checks.faults.strategies import execution_scenarios
from zcspec.checks.faults.variant import Variant, swap
from zcspec.impl.runtime.v1.classify import FM
from zcspec.impl.runtime.v1.refresh import RefreshTable


def _drop_last_io_slot(table: RefreshTable) -> RefreshTable:
    """The refresh table a loop that stops one slot short for each model I/O would walk (the feature
    map's slots are left alone)."""
    last = {r.alloc: r for r in table.registrations if r.alloc != FM}
    return RefreshTable(tuple(r for r in table.registrations if r is not last.get(r.alloc)))


def _slot_not_refreshed():
    """GE (davinci_model.cc ``UpdateAllNodeArgs``): after a re-bind every registered slot is rewritten; this
    misses each I/O's last."""
    def make(refresh):
        return lambda table, active, bindings, feature_map: refresh(_drop_last_io_slot(table), active, bindings,
                                                                    feature_map)
    return swap("zcspec.impl.runtime.v1.refresh", "refresh", make)


def _size_slack_sign():
    """CheckUserAndModelSize allows ``size + 64``; this subtracts the 64 bytes (a sign error)."""
    return swap("zcspec.impl.runtime.v1.bind", "GE_SIZE_SLACK", lambda slack: -slack)


def _hccl_disable_zero_copy_forgotten():
    """HcclTaskInfo's DisableZeroCopy (hccl_task_info.cc InitZeroCopyInfos) forgotten on GE's legacy path:
    an HCCL task's I/O whose zero-copy flags are off is still treated as zero copy."""
    return swap("zcspec.impl.runtime.v1.zero_copy", "_hccl_flag", lambda flag: (lambda task, slot: True))


VARIANTS = (
    Variant("v1-slot-not-refreshed", "runtime_v1",
            "one argument slot per model I/O is not refreshed after a re-bind (an off-by-one in the "
            "refresh loop)",
            _slot_not_refreshed, lambda n: execution_scenarios(("v1",), max_nodes=n), ("V1-SLOT-REFRESH",)),
    Variant("v1-size-slack-sign", "runtime_v1",
            "the 64-byte slack of the buffer size check subtracted instead of added: correct buffers refused",
            _size_slack_sign, lambda n: execution_scenarios(("v1",), max_nodes=n), ("V1-BUFFER-SIZE",)),
    Variant("v1-hccl-disable-zero-copy-forgotten", "runtime_v1",
            "DisableZeroCopy forgotten for HCCL: collectives that cannot be refreshed are bound to user "
            "buffers anyway",
            _hccl_disable_zero_copy_forgotten,
            # The compiler never lets such a collective touch zero-copy I/O (its blocks are not zero
            # copy, IsNodeSupportZeroCopy, or a MemcpyAddrAsync sits in between), so the hunt runs crafted models
            # whose HCCL tasks declare no zero-copy support: the runtime's own defence must copy. Only GE's
            # legacy path (legacy_copy_only_addrs) reads the flags; NnExecute refreshes the HCCL slots.
            lambda n: execution_scenarios(("v1",), max_nodes=n, socs=("ascend910b",),
                                        families=("unary", "binary", "allreduce"),
                                        model_edits=("hccl_zero_copy_off",),
                                        run_options=(("legacy_copy_only_addrs", True),)),
            ("V1-HCCL-COPY",)),
)
