"""Tallies of conformance results: per op, in total, as a text table, Markdown or JSON.

A case counts once for every op type its graph uses (an ``_expanded`` case tests each op of
the function body it expands to), and once in the totals. ``frozen`` counts the passing
cases that needed inputs frozen to their test values (see ``runner``).
"""
from __future__ import annotations

import functools
from collections import Counter
from typing import Iterable

import attrs
import onnx
from onnx import defs

from zcspec.checks.conformance.runner import STATUSES, Result
from zcspec.impl.compiler import op_limits, ops

COLUMNS = ("cases", *STATUSES, "frozen")


@attrs.frozen
class Tally:
    per_op: dict[str, Counter]
    total: Counter

    @property
    def pass_rate(self) -> float:
        return self.total["pass"] / self.total["cases"] if self.total["cases"] else 1.0


def _count(counter: Counter, r: Result) -> None:
    counter["cases"] += 1
    counter[r.status] += 1
    counter["frozen"] += int(r.status == "pass" and bool(r.frozen))


def tally(results: Iterable[Result]) -> Tally:
    per_op: dict[str, Counter] = {}
    total = Counter({c: 0 for c in COLUMNS})
    for r in results:
        _count(total, r)
        for op in r.op_types:
            _count(per_op.setdefault(op, Counter({c: 0 for c in COLUMNS})), r)
    return Tally(dict(sorted(per_op.items())), total)


def _rows(t: Tally) -> list[tuple]:
    rows = [(op, *(c[k] for k in COLUMNS)) for op, c in t.per_op.items()]
    return rows + [("total (distinct cases)", *(t.total[k] for k in COLUMNS))]


def text_table(t: Tally) -> str:
    width = max([len(r[0]) for r in _rows(t)] + [2])
    head = f"{'op':<{width}} " + " ".join(f"{k:>7}" for k in COLUMNS)
    lines = [head, "-" * len(head)]
    lines += [f"{r[0]:<{width}} " + " ".join(f"{v:>7}" for v in r[1:]) for r in _rows(t)]
    lines.append(f"pass rate {100 * t.pass_rate:.1f}% of {t.total['cases']} cases (both runtimes)")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def _onnx_versions() -> dict[str, tuple[int, ...]]:
    """Default-domain op -> the opsets its ONNX schema changed in (the installed onnx's)."""
    out: dict[str, set] = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            out.setdefault(schema.name, set()).add(schema.since_version)
    return {op: tuple(sorted(v)) for op, v in out.items()}


def _not_supported(op: str) -> str:
    return "; ".join(e.feature for e in op_limits.UNSUPPORTED.get(op, ())) or "—"


def _exempt(entry) -> str:
    return f" except in {' and '.join(sorted(entry.exempt))}" if entry.exempt else ""


def markdown_table(t: Tally) -> str:
    """The op table (every claimed ONNX op: its schema versions, what it does not support) with the
    conformance counts of each op, the totals, and the limits that apply to every op."""
    claimed = [op for op in ops.OPS if op in _onnx_versions()]
    head = ("op", "ONNX versions", "not supported", *COLUMNS)
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|" + "---:|" * len(COLUMNS)]
    for op in sorted(claimed):
        counts = t.per_op.get(op, Counter())
        versions = ", ".join(map(str, _onnx_versions()[op]))
        lines.append(f"| {op} | {versions} | {_not_supported(op)} | " + " | ".join(str(counts[k]) for k in COLUMNS) + " |")
    lines.append("| total (distinct cases) | | | " + " | ".join(str(t.total[k]) for k in COLUMNS) + " |")
    lines += ["", f"Pass rate: {100 * t.pass_rate:.1f}% of {t.total['cases']} cases, on both runtimes "
                  f"(onnx {onnx.__version__}'s node tests and schemas).", "",
              "Not supported by any op: " + "; ".join(
                  f"{e.feature}{_exempt(e)} ({e.why})" for e in op_limits.UNSUPPORTED[op_limits.ANY_OP]) + "."]
    return "\n".join(lines)


def as_json(t: Tally, results: Iterable[Result]) -> dict:
    return {"ops": {op: dict(c) for op, c in t.per_op.items()}, "total": dict(t.total),
            "pass_rate": t.pass_rate, "cases": [r.as_dict() for r in results]}
