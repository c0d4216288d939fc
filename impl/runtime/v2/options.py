"""LoweringOptions: what a caller chooses when it loads a model into runtime v2 (GE: lowering_opt.h
``LoweringOption``).

GE's four switches, plus zcspec's own:

- ``trust_shape_on_out_tensor`` (TrustOutTensor): trust the caller's output shapes; the
  TrustOutTensor pass then drops an EnsureTensorAtOutMemory that only repeats a
  SplitTensorForOutputData on the same output.
- ``always_zero_copy`` (LoweringOption): the caller promises correctly sized, device-placed
  output memory; no fallback, a bad buffer is an error (E13031).
- ``always_external_allocator`` (LoweringOption): every allocator comes from the caller; the
  executor creates none and a missing one is an error.
- ``enable_single_stream`` (LoweringOption): every task on one stream.
- ``zero_copy`` (zcspec): run ModelOutTensorZeroCopy at all (False = outputs are
  always computed in runtime memory and copied, ``zcspec run --no-zero-copy``).
- ``ge_compat`` (zcspec): reproduce GE's AllocModelOutTensor, which shares a user
  buffer without a size or placement check (AllocModelOutTensor); by default zcspec checks first
  and falls back to an allocation.
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.v2.errors import ApiMisuseError


@attrs.frozen
class LoweringOptions:
    trust_shape_on_out_tensor: bool = False
    always_zero_copy: bool = False
    always_external_allocator: bool = False
    enable_single_stream: bool = False
    zero_copy: bool = True
    ge_compat: bool = False

    def __attrs_post_init__(self):
        for f in attrs.fields(type(self)):
            value = getattr(self, f.name)
            if not isinstance(value, bool):
                raise ApiMisuseError(f"LoweringOptions.{f.name}={value!r} must be a bool")
