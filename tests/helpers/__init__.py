"""Helpers shared by the test suites: small models, harnesses, strategies and independent checks.

Test modules import what they share from here (``from tests.helpers.x import ...``), never from
another test module; tests/test_layout_rules.py keeps it so. Checker code a user would want
(strategies, oracles) lives in ``zcspec.checks`` instead.
"""
