"""Runtime v2's lifecycle, model-checked: the spec holds after every execute and the memory accounting is
exact after every step (checks/machines/v2.py)."""
from hypothesis import settings

from zcspec.checks.machines.v2 import V2Lifecycle

TestV2Lifecycle = V2Lifecycle.TestCase
TestV2Lifecycle.settings = settings(max_examples=15, stateful_step_count=12, deadline=None)
