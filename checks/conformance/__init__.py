"""ONNX's backend node tests as zcspec's conformance suite (``zcspec conformance``).

- ``cases.node_cases(ops)``: onnx's node test cases whose ops are all in the op table;
- ``runner.run_case(case)``: import, compile, run on runtime v1 and v2, compare: a ``Result``
  whose status is ``pass``, ``refused`` (naming a feature ``op_limits`` lists) or ``fail``;
  ``runner.run_both(case)``: as the file is and with run-time operands frozen (a ``Both``);
- ``report``: per-op tallies of both ways, as a text table, Markdown (docs/frontend.md) or JSON.

This is checker code: it drives impl/ and nothing in impl/ imports it.
"""
from zcspec.checks.conformance.cases import Case, node_cases
from zcspec.checks.conformance.report import Tally, tally
from zcspec.checks.conformance.runner import Both, Result, run_both, run_case

__all__ = ["Both", "Case", "Result", "Tally", "node_cases", "run_both", "run_case", "tally"]
