"""Variants only the Z3 proofs catch: each is right on every input a fixed check tries, and wrong on
inputs no campaign draws but the API allows.

- ``v1-refresh-base-granule``: runtime v1's refresh rebuilds each slot address from the user
  buffer's base rounded down to 32 bytes (the finest device-malloc granularity of any SoC profile,
  impl/platform/soc.py) plus the relative offset. Every buffer that starts a device allocation
  is a multiple of 32, so every execution the checker runs is right; a buffer that is a 4-byte
  aligned view into a larger allocation (legal: the API asks only for element alignment) makes
  every kernel read and write up to 28 bytes before it. ``checks.proofs.refresh`` refutes it with
  such a placement.

Every invariant misses these; the campaigns (``checks.campaign.run_campaign``, hence the hunts of
``checks.faults.hunt`` and plain ``zcspec explore``) run the proofs on each case and report the
refuted one as a ``PROOF-...`` counterexample. ``benchmarks/z3_proof.py --faults`` shows each missed
by verify without proofs and refuted by the proofs.
"""
from __future__ import annotations

import attrs

from zcspec.checks.faults.strategies import model_file_scenarios
from zcspec.checks.faults.variant import Variant, swap
from zcspec.checks.proofs.cases import REFRESH_CLAIM

GRANULE = 32


def _refresh_base_granule():
    """GE (args_io_addrs_updater.cc ``ArgsIoAddrsUpdater::SetArgIoAddrs``): slot = active base + offset; this takes
    the active base of each user buffer rounded down to ``GRANULE`` bytes."""
    def make(refresh):
        def wrong(table, active, bindings, feature_map):
            rounded = [attrs.evolve(b, address=b.address & ~(GRANULE - 1))
                       if b.mode != "copy" and b.address is not None else b for b in bindings]
            return refresh(table, active, rounded, feature_map)
        return wrong
    return swap("zcspec.impl.runtime.v1.refresh", "refresh", make)


VARIANTS = (
    Variant("v1-refresh-base-granule", "runtime_v1",
            "the argument refresh uses the user buffer's base rounded down to 32 bytes: right for every "
            "buffer that starts a device allocation, wrong for an element-aligned view into one",
            _refresh_base_granule, model_file_scenarios, (REFRESH_CLAIM,)),
)
