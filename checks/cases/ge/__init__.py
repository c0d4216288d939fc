"""GE's own unit tests (github ``mirror-cann/ge`` ``tests/ge/ut/...``), ported as a catalogue of cases.

``catalogue.py`` is the record (one :class:`~zcspec.checks.cases.ge.catalogue.GeCase` per GE ``TEST_F`` and
parameter set: GE file, test name, status and, for a deviation, its docs/ge-deviations.md row and reason);
``graph.py`` rebuilds a GE memory-assignment test graph on zcspec's IR and ``*_scenarios.py`` the runtime
tests' models; one module per GE test file holds the cases; ``all.py`` imports them all and lists the
catalogue; ``judge.py`` says how a case came out against its record. tests/ge runs each case under pytest
and ``zcspec verify`` runs them as its phase "GE's unit-test cases" (checks/verify.py).
"""
