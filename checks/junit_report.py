"""Plan reports as JUnit XML, the report format CI systems (GitLab, Jenkins, GitHub's test reporters) read.

One ``testsuite`` per plan, one ``testcase`` per claim that applies to it: a violated claim is a
``failure`` whose text lists every violation; a claim the plan gives no facts for is ``skipped``
with the reason; a claim with nothing to test in this plan passes with "not exercised" in its
output. With a ``max_ratio`` each activation arena is one more case, failing above the ratio.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from zcspec.checks.errors import UsageError


def _suite(report) -> ET.Element:
    cases = []
    for claim in report.applied:
        case = ET.Element("testcase", classname=report.title, name=claim, time="0")
        state = report.claim_state(claim)
        if state == "violated":
            broken = [v for v in report.violations if v.invariant_id == claim]
            failure = ET.SubElement(case, "failure", message=f"{len(broken)} violation(s) of {claim}", type=claim)
            failure.text = "\n".join(f"{v.culprit}: {v.message}" for v in broken)
        elif state == "not judged":
            ET.SubElement(case, "skipped", message=f"not judged: {report.not_judged[claim]}")
        else:
            ET.SubElement(case, "system-out").text = state
        cases.append(case)
    if report.max_ratio is not None:
        over = {a.name for a in report.over_ratio}
        for a in report.arenas:
            case = ET.Element("testcase", classname=report.title, name=f"arena {a.name} <= {report.max_ratio} x lower bound",
                              time="0")
            ratio = "-" if a.ratio is None else f"{a.ratio:.3f}"
            if a.name in over:
                ET.SubElement(case, "failure", message=f"{a.size} bytes, {ratio}x its lower bound {a.lower_bound}",
                              type="max-ratio")
            else:
                ET.SubElement(case, "system-out").text = f"{a.size} bytes, {ratio}x its lower bound {a.lower_bound}"
            cases.append(case)
    suite = ET.Element("testsuite", name=report.title, tests=str(len(cases)),
                       failures=str(sum(c.find("failure") is not None for c in cases)),
                       skipped=str(sum(c.find("skipped") is not None for c in cases)), errors="0")
    suite.extend(cases)
    return suite


def junit_xml(reports) -> str:
    """The JUnit XML text for PlanReports ``reports``."""
    root = ET.Element("testsuites", name="zcspec check")
    root.extend(_suite(r) for r in reports)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(reports, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(junit_xml(reports))
    except OSError as e:
        raise UsageError(f"cannot be written: {e.strerror or e}", file=path) from e
