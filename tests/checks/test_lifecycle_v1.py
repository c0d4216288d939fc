"""Runtime v1's lifecycle, model-checked: the spec holds after every step (checks/machines/v1.py)."""
from hypothesis import settings

from zcspec.checks.machines.v1 import V1Lifecycle

TestV1Lifecycle = V1Lifecycle.TestCase
TestV1Lifecycle.settings = settings(max_examples=25, stateful_step_count=12, deadline=None)
