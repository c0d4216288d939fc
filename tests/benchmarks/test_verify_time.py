"""benchmarks/verify_time.py: the script that prints the main job's figures in docs/benchmarks.md."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "verify_time.py"


def test_the_script_imports_and_explains_itself():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--examples" in out.stdout and "zcspec verify" in out.stdout


def test_parts_is_offered_and_explained():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--parts" in out.stdout


def test_the_proof_timer_times_each_claim_and_puts_the_campaign_back():
    sys.path.insert(0, str(SCRIPT.parent))
    import verify_time  # noqa: E402  (a script, not a package module)
    from zcspec.checks import campaign
    from zcspec.checks.proofs.cases import CLAIMS
    from zcspec.checks.strategies.scenarios import scenarios

    original = campaign.claimed_proofs
    with verify_time._timed_proofs() as spent:
        run = campaign.run_campaign(scenarios(), max_examples=20, seed=0, proofs=CLAIMS)
    assert campaign.claimed_proofs is original
    ran = {claim for claim, _ in run.tally.proofs}
    assert ran and set(spent) == ran and all(s > 0 for s in spent.values())
