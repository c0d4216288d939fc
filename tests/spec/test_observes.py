"""The evidence table (spec/observes.py) names every claim of the catalogue and nothing else."""
from zcspec.spec.observes import OBSERVES
from zcspec.spec.registry import ids


def test_every_claim_says_what_it_observes_and_nothing_stale():
    assert set(OBSERVES) == set(ids()), {"missing": sorted(set(ids()) - set(OBSERVES)),
                                          "stale": sorted(set(OBSERVES) - set(ids()))}


def test_every_entry_names_facts_and_an_artefact():
    for claim, o in OBSERVES.items():
        assert o.facts.strip() and o.artefact.strip(), claim
        assert "impl" not in o.artefact, f"{claim}: an artefact, not an implementation module"
