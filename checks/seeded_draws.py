"""Draws that the seed alone decides: Hypothesis's constants from source code switched off for a campaign.

Hypothesis (6.1xx) draws, about one time in twenty, a constant it found in the source of the local modules
imported so far (``hypothesis.internal.conjecture.providers._get_local_constants``, rescanned whenever
``sys.modules`` grows). Which modules are imported when a draw happens depends on what ran before in the
process: verify's earlier phases, modules the code under test imports lazily, another thread's imports,
and whether zcspec is installed in site-packages (whose modules are not "local") or from a checkout. So
one seed drew different campaigns: verify's campaign of seed 0 differed from the same campaign run alone,
and two verifies of one commit run at once once drew different scenarios from case 2 on (the mutation
benchmark's twice-identical baseline refused them).

:func:`seed_only` runs a block with that pool empty (and Hypothesis's cache of allowed constants cleared
on the way in and out, so nothing drawn before leaks in or out). Hypothesis's own fixed constants (0, 1,
the float edges, ...) stay. It patches a private function; a Hypothesis without it is left alone.
"""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def seed_only():
    """Within the block, Hypothesis draws no constants from the source of imported modules."""
    try:
        from hypothesis.internal.conjecture import providers
        original, constants, cache = providers._get_local_constants, providers.Constants, providers.CONSTANTS_CACHE
    except (ImportError, AttributeError):   # another Hypothesis: nothing to switch off
        yield
        return
    empty = constants()
    cache.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()
