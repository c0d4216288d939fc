"""The smallest satisfying and violating example of every invariant.

The spec document shows these, and tests/spec/test_spec_examples.py checks every
one of them (the satisfying one exercises its invariant and has no violation
of it; the violating one is reported, naming ``culprit``), so the document
never shows an example that was not checked.
"""
from __future__ import annotations

import functools

from zcspec.spec.examples import (allocators, api_calls, calls, device, execution, input_file, layout, layout_tight, model_file,
                                  runtime)
from zcspec.spec.examples.build import Example


@functools.lru_cache(maxsize=None)
def all_examples() -> dict[str, Example]:
    """Examples by invariant id."""
    out: dict[str, Example] = {}
    for module in (api_calls, input_file, layout, layout_tight, model_file, runtime, execution, calls, device, allocators):
        for ex in module.EXAMPLES:
            if ex.invariant_id in out:
                raise ValueError(f"two examples for {ex.invariant_id}")
            out[ex.invariant_id] = ex
    return out
