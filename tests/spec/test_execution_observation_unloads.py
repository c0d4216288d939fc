"""An execution observation holds at most one ``unload``: a model is unloaded once.

A second unload is no trace a runtime can make; before this check an observer that invented one passed
every claim (EXEC-NO-LEAK reads the last unload only), which is how a mutant of runtime v2's observer
(an ``unload`` added to an observation that had one) passed verify.
"""
from __future__ import annotations

import json

import pytest

from zcspec.checks.cli.main import main
from zcspec.spec.errors import ObservationConsistencyError
from zcspec.spec.examples.build import FM, ZC, events, execution
from zcspec.spec.observables import ExecutionObservation, loads, to_data

_FREES = (dict(kind="free", address=FM), dict(kind="free", address=ZC))


def test_one_unload_is_an_observation():
    obs = execution(evs=events(*_FREES, dict(kind="unload")))
    assert sum(e.kind == "unload" for e in obs.events) == 1


def test_a_second_unload_is_refused_naming_the_event():
    with pytest.raises(ObservationConsistencyError, match=r"2 unload events .*a model is unloaded once") as err:
        execution(evs=events(*_FREES, dict(kind="unload"), dict(kind="unload")))
    assert err.value.path == "events[3]"


def test_the_file_reader_and_the_command_line_refuse_it(tmp_path, capsys):
    good = to_data(execution(evs=events(*_FREES, dict(kind="unload"))))
    bad = json.loads(json.dumps(good))
    bad["events"].append(dict(bad["events"][-1], seq=len(bad["events"])))
    path = tmp_path / "two_unloads.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ObservationConsistencyError, match="unload events"):
        loads(ExecutionObservation, path.read_text(), file=str(path))
    assert main(["spec", "--observation", str(path)]) == 2
    err = capsys.readouterr().err
    assert "two_unloads.json" in err and "events[3]" in err and "unloaded once" in err
