"""Tallies of conformance results, both ways: per op, in total, as a text table, Markdown or JSON.

Each case (``runner.Both``) counts as the file is (``pass``, ``refused``, ``fail``) and with the
inputs its import asks for frozen to their test values (``frozen pass``, ``frozen refused``,
``frozen fail``); ``run-time operand`` counts the cases refused as the files are because an operand
that decides a shape, a size or the task list is a run-time input (``runner.RUNTIME_VALUE``): the
ones freezing may turn into passes. A case counts once for every op type its graph uses (an
``_expanded`` case tests each op of the function body it expands to), and once in the totals.
"""
from __future__ import annotations

import functools
from collections import Counter
from typing import Iterable

import attrs
import onnx
from onnx import defs

from zcspec.checks.conformance.runner import STATUSES, Both
from zcspec.impl.compiler import op_limits, ops

AS_IS = STATUSES
FROZEN = tuple(f"frozen {s}" for s in STATUSES)
COLUMNS = ("cases", *AS_IS, "run-time operand", *FROZEN)


@attrs.frozen
class Tally:
    per_op: dict[str, Counter]
    total: Counter

    @property
    def pass_rate(self) -> float:
        """Passing as the files are."""
        return self.total["pass"] / self.total["cases"] if self.total["cases"] else 1.0

    @property
    def frozen_pass_rate(self) -> float:
        return self.total["frozen pass"] / self.total["cases"] if self.total["cases"] else 1.0


def _count(counter: Counter, b: Both) -> None:
    counter["cases"] += 1
    counter[b.as_is.status] += 1
    counter["run-time operand"] += int(b.as_is.runtime_operand)
    counter[f"frozen {b.frozen.status}"] += 1


def tally(results: Iterable[Both]) -> Tally:
    per_op: dict[str, Counter] = {}
    total = Counter({c: 0 for c in COLUMNS})
    for b in results:
        _count(total, b)
        for op in b.op_types:
            _count(per_op.setdefault(op, Counter({c: 0 for c in COLUMNS})), b)
    return Tally(dict(sorted(per_op.items())), total)


def _rows(t: Tally) -> list[tuple]:
    rows = [(op, *(c[k] for k in COLUMNS)) for op, c in t.per_op.items()]
    return rows + [("total (distinct cases)", *(t.total[k] for k in COLUMNS))]


def _rates(t: Tally) -> str:
    return (f"pass rate {100 * t.pass_rate:.1f}% of {t.total['cases']} cases as the files are, "
            f"{100 * t.frozen_pass_rate:.1f}% with the run-time operands frozen (both runtimes)")


def text_table(t: Tally) -> str:
    width = max([len(r[0]) for r in _rows(t)] + [2])
    cells = [max(7, len(k)) for k in COLUMNS]
    head = f"{'op':<{width}} " + " ".join(f"{k:>{w}}" for k, w in zip(COLUMNS, cells))
    lines = [head, "-" * len(head)]
    lines += [f"{r[0]:<{width}} " + " ".join(f"{v:>{w}}" for v, w in zip(r[1:], cells)) for r in _rows(t)]
    lines.append(_rates(t))
    return "\n".join(lines)


def runtime_operand_refusals(results: Iterable[Both]) -> dict[str, int]:
    """Op type of the refused node -> how many cases are refused as the files are because one of its
    shape-, size- or task-deciding operands is a run-time input."""
    out: Counter = Counter()
    for b in results:
        if b.as_is.runtime_operand:
            out[b.as_is.refused_op or "?"] += 1
    return dict(sorted(out.items()))


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


def markdown_table(t: Tally, results: Iterable[Both] = ()) -> str:
    """The op table (every claimed ONNX op: its schema versions, what it does not support) with the
    conformance counts of each op both ways, the totals, the ops whose run-time operands are refused
    as the files are, and the limits that apply to every op."""
    claimed = [op for op in ops.OPS if op in _onnx_versions()]
    head = ("op", "ONNX versions", "not supported", *COLUMNS)
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|" + "---:|" * len(COLUMNS)]
    for op in sorted(claimed):
        counts = t.per_op.get(op, Counter())
        versions = ", ".join(map(str, _onnx_versions()[op]))
        lines.append(f"| {op} | {versions} | {_not_supported(op)} | " + " | ".join(str(counts[k]) for k in COLUMNS) + " |")
    lines.append("| total (distinct cases) | | | " + " | ".join(str(t.total[k]) for k in COLUMNS) + " |")
    lines += ["", f"Pass rate: {100 * t.pass_rate:.1f}% of {t.total['cases']} cases as the files are, "
                  f"{100 * t.frozen_pass_rate:.1f}% with the run-time operands frozen, on both runtimes "
                  f"(onnx {onnx.__version__}'s node tests and schemas)."]
    refused = runtime_operand_refusals(results)
    if refused:
        lines += ["", "Refused as the files are because an operand deciding a shape, a size or the task list is a "
                      "run-time input (cases, by the refused node's op): "
                      + ", ".join(f"{op} {n}" for op, n in refused.items()) + "."]
    lines += ["", "Not supported by any op: " + "; ".join(
        f"{e.feature}{_exempt(e)} ({e.why})" for e in op_limits.UNSUPPORTED[op_limits.ANY_OP]) + "."]
    return "\n".join(lines)


def as_json(t: Tally, results: Iterable[Both]) -> dict:
    return {"ops": {op: dict(c) for op, c in t.per_op.items()}, "total": dict(t.total),
            "pass_rate": t.pass_rate, "frozen_pass_rate": t.frozen_pass_rate,
            "cases": [{"as_is": b.as_is.as_dict(), "frozen": b.frozen.as_dict()} for b in results]}
