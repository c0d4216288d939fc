"""Hypothesis profiles: budgets in examples, never wall-clock deadlines, so nothing is flaky.

dev (default), ci (selected when CI is set), nightly (HYPOTHESIS_PROFILE=nightly).
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("nightly", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
