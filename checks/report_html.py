"""The HTML of a report page: ``render_html(report)`` turns a ``checks.report_page.RunReport`` into one
self-contained page (inline CSS and SVG, no script, no external URL), a section per id of
``report_page.SECTIONS``; every string from the run is escaped."""
from __future__ import annotations

from html import escape

import attrs

from zcspec.checks.graph_picture import graph_svg

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1200px;
       padding: 0 16px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin-bottom: 4px; }
section { margin-bottom: 28px; }
table { border-collapse: collapse; font-size: 13px; } th, td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { display: inline-block; padding: 4px 10px; border-radius: 4px; font-weight: bold; color: white; }
.verdict.ok { background: #2e7d32; } .verdict.failed { background: #c62828; }
tr.bad td { background: #fdecea; } tr.thin td { background: #fff6dc; } .state-ok { color: #2e7d32; }
article.violation { border: 1px solid #e0b4b4; border-radius: 6px; padding: 8px 14px; margin: 12px 0; }
.culprit { font-family: Menlo, Consolas, monospace; } .note, .empty { color: #666; font-style: italic; }
pre { background: #f7f7f7; padding: 6px; overflow-x: auto; white-space: pre-wrap; }
.picture { overflow-x: auto; margin: 8px 0; } .picture svg { max-width: 100%; height: auto; }
"""


def _e(value) -> str:
    return escape(str(value), quote=True)


def _table(head: tuple[str, ...], rows, numeric: tuple[int, ...] = (), classes=None) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for k, row in enumerate(rows):
        cls = f' class="{classes[k]}"' if classes and classes[k] else ""
        out.append(f"<tr{cls}>" + "".join(f'<td class="n">{_e(c)}</td>' if j in numeric else f"<td>{_e(c)}</td>"
                                          for j, c in enumerate(row)) + "</tr>")
    return "\n".join(out) + "</tbody></table>"


def _section(id_: str, heading: str, body: str, empty: str) -> str:
    body = body or f'<p class="empty">{_e(empty)}</p>'
    return f'<section id="{id_}">\n<h2>{_e(heading)}</h2>\n{body}\n</section>'


def _violation(v) -> str:   # a report_page.ViolationEntry
    parts = [f'<article class="violation"><h3>{_e(v.claim)} in {_e(v.case)}</h3>',
             f'<p><span class="culprit">{_e(v.culprit)}</span>: {_e(v.message)}</p>']
    if v.count > 1:
        parts.append(f"<p>{v.count} failing cases; the one on the fewest nodes is shown.</p>")
    if v.values:
        parts.append(_table(("value", "is"), sorted(v.values.items())))
    if v.note:
        parts.append(f'<p class="note">{_e(v.note)}</p>')
    if v.graph is not None:
        parts.append(f'<div class="picture graph">{graph_svg(v.graph)}</div>')
    if v.plan_rows:
        parts.append("<h3>plan rows</h3><pre>" + "\n".join(_e(r) for r in v.plan_rows) + "</pre>")
    if v.picture is not None:
        parts.append(f'<div class="picture layout">{v.picture}</div>')
    if v.others:
        parts.append("<details><summary>the other failing cases</summary><pre>"
                     + "\n".join(_e(o) for o in v.others) + "</pre></details>")
    return "\n".join(parts) + "</article>"


def render_html(report) -> str:
    """One self-contained HTML page of ``report``: a section per id of ``SECTIONS``; one with nothing to show
    says so. No script, no external URL (the favicon is an empty data URL, so the browser asks for nothing)."""
    verdict = '<span class="verdict ok">PASSED</span>' if report.ok else '<span class="verdict failed">FAILED</span>'
    summary = (f"<p>{verdict} <code>zcspec {_e(report.mode)}</code>: {_e(report.summary)}</p>"
               + ("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in report.notes) + "</ul>" if report.notes else ""))
    coverage = _table(("claim", "applied", "exercised", "distinct", "violated", "result"),
                      [attrs.astuple(r) for r in report.coverage], numeric=(1, 2, 3, 4),
                      classes=["bad" if r.violated else "" if r.state == "ok" else "thin" for r in report.coverage]
                      ) if report.coverage else ""
    proved = sum(p.status == "proved" for p in report.proofs)
    proofs = (f"<p>{proved} of {len(report.proofs)} rows proved (unknown is never a pass).</p>"
              + _table(("case", "status", "claim", "reason"), [attrs.astuple(p) for p in report.proofs],
                       classes=["" if p.status == "proved" else "bad" for p in report.proofs])) if report.proofs else ""
    corpus = _table(("entry", "result"), [(c.summary, "ok" if c.ok else "REGRESSED") for c in report.corpus],
                    classes=["" if c.ok else "bad" for c in report.corpus]) if report.corpus else ""
    body = [_section("summary", "Summary", summary, ""),
            _section("coverage", "Coverage per claim", coverage, "no claims in this run"),
            _section("violations", "Violations", "\n".join(_violation(v) for v in report.violations), "no violations"),
            _section("crashes", "Crashes of the code under test", _table(("case", "error"), report.crashes)
                     if report.crashes else "", "no crashes"),
            _section("proofs", "Z3 proofs", proofs, "no proofs in this run"),
            _section("corpus", "Counterexample corpus", corpus, "no corpus replayed in this run"),
            _section("timings", "Timings", _table(("phase", "seconds"), [(p, f"{s:.2f}") for p, s in report.timings],
                                                  numeric=(1,)) if report.timings else "", "no timings")]
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{_e(report.title)}</title>\n'
            f'<link rel="icon" href="data:,">\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{_e(report.title)}</h1>\n'
            + "\n".join(body) + "\n</body>\n</html>\n")
