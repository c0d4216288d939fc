"""Load-time options of runtime v1 (what GE reads from graph options and the ACL config handle).

- ``zero_copy`` (default True): bind model I/O to the user's buffers by refreshing
  the registered argument slots. False: the model's own I/O region is allocated
  and every input and output is copied in and out of it (no refresh at all).
- ``reuse_zero_copy_memory`` (0 or 1, ``ge.exec.reuseZeroCopyMemory``, set through
  ACL_MDL_WORKSPACE_MEM_OPTIMIZE, ``model_config_om2.cpp``): 1 leaves the I/O region
  unbacked even when it could be (GE: always) and rejects host-placed I/O
  (``ConstructZeroCopyIoActiveBaseAddrs``). On GE's execute path that is all: an I/O
  outside zero-copy blocks lives in the feature map and is copied for that reason.
- ``legacy_copy_only_addrs`` (default False): decide copy versus refresh as GE's legacy
  paths do, from the set ``DavinciModel::copy_only_addrs_`` (filled by ``DisableZeroCopy``,
  ``SetCopyOnlyOutput``, ``DisableZeroCopyInReuseMemoryMode`` and the HCCL and memcpy task
  infos; read by ``CopyOutputDataLegacy`` and the queue paths ``BindOutputQueue``,
  ``CpuInputCopyProcess``), instead of as ``NnExecute`` does (address containment
  in the allocations ``GenMemAllocations`` builds). zero_copy.py lists both rule sets.
- ``feature_base_refreshable`` (``ge.featureBaseRefreshable``): the work memory may
  be moved after load (``LoadedModel.update_work_memory``); the feature-map slots
  are then refreshed too (refresh bit kRefreshByFm, ``task_args_refresh_type_classifier.cc``).
- ``session`` (default None: the model's own): the :class:`~zcspec.impl.runtime.v1.session.Session`
  the model is loaded into. Under the session's extend-size static memory policy
  (``ge.exec.staticMemoryPolicy`` 1 or 2) a model without the caller's work memory takes its
  feature map (and, with zero copy off, its I/O region) from the session's ActiveMemoryAllocator,
  shared with the session's other models (``DavinciModel::MallocFeatureMapMem``, session.py).
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.v1.errors import InvalidParam
from zcspec.impl.runtime.v1.session import Session


def _reuse_value(instance, attribute, value) -> None:
    # ACL_WORKSPACE_MEM_OPTIMIZE_DEFAULT = 0, ..._INPUTOUTPUT = 1; anything else is refused (``model_config_om2.cpp``).
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1):
        raise InvalidParam(f"reuse_zero_copy_memory={value!r} must be 0 (default) or 1 (ACL_MDL_WORKSPACE_MEM_OPTIMIZE)")


def _bool(instance, attribute, value) -> None:
    if not isinstance(value, bool):
        raise InvalidParam(f"{attribute.name}={value!r} must be a bool")


def _session(instance, attribute, value) -> None:
    if value is not None and not isinstance(value, Session):
        raise InvalidParam(f"session={value!r} must be a zcspec.impl.runtime.v1.Session or None")


@attrs.frozen
class LoadOptions:
    zero_copy: bool = attrs.field(default=True, validator=_bool)
    reuse_zero_copy_memory: int = attrs.field(default=0, validator=_reuse_value)
    feature_base_refreshable: bool = attrs.field(default=False, validator=_bool)
    legacy_copy_only_addrs: bool = attrs.field(default=False, validator=_bool)
    session: Session | None = attrs.field(default=None, validator=_session)

    def __attrs_post_init__(self):
        # reuseZeroCopyMemory means "never back the I/O region"; zero copy off copies through it.
        if self.reuse_zero_copy_memory and not self.zero_copy:
            raise InvalidParam("reuse_zero_copy_memory=1 needs zero_copy=True: with zero copy off, I/O is copied "
                               "through the model's own I/O region, which reuseZeroCopyMemory leaves unbacked")
        if self.feature_base_refreshable and self.shares_feature_map:
            raise InvalidParam(f"feature_base_refreshable with {self.session!r}: a feature map the session's "
                               "allocator shares between models cannot be moved by one of them (not modelled)")

    @property
    def shares_feature_map(self) -> bool:
        """Whether a load without the caller's work memory takes its feature map from the session's allocator."""
        return self.session is not None and self.session.extend_size_memory
