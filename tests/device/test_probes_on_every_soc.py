"""verify probes a device of every SoC of the capability table, not only the default one
(checks/verify_cases.py ``PROBE_SOCS``): what such a device does, its allocation alignment first, is
judged against the spec's own table (DEVICE-ALLOC-FIT). Planted here: ascend310p's device aligning its
allocations to 16 bytes where the SoC aligns them to 32."""
from __future__ import annotations

import attrs

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import PROBE_SOCS, device_cases
from zcspec.impl.platform import soc as socs
from zcspec.spec.check import check


def _other_soc_probes():
    return [(label, sc) for label, sc in device_cases(VerifyConfig(models=())) if sc.compile.soc != "ascend910b"]


def _violations():
    out = {}
    for label, scenario in _other_soc_probes():
        for obs in observe(scenario):
            report = check(obs)
            assert "DEVICE-ALLOC-FIT" in report.exercised, label
            out[label] = sorted({v.invariant_id for v in report.violations})
    return out


def test_one_probe_per_other_soc_and_each_is_clean():
    assert sorted(sc.compile.soc for _, sc in _other_soc_probes()) == sorted(s for s in PROBE_SOCS if s != "ascend910b")
    assert all(ids == [] for ids in _violations().values())


def test_a_soc_whose_device_aligns_allocations_too_little_is_caught(monkeypatch):
    monkeypatch.setitem(socs.PROFILES, "ascend310p", attrs.evolve(socs.PROFILES["ascend310p"], alloc_align=16))
    found = _violations()
    assert [label for label, ids in found.items() if "DEVICE-ALLOC-FIT" in ids] == ["device probe 8 [ascend310p]"]
