"""A drawn program as data: a start shape and a list of steps, each a form and its arguments.

The jax and torch programs of the campaigns (checks/foreign/jax_programs.py, torch_programs.py) are
this, each rendering its steps to its own framework's source; the data form is what a finding file
keeps.
"""
from __future__ import annotations

import attrs


@attrs.frozen
class Step:
    form: str
    args: tuple = ()


@attrs.frozen
class StepProgram:
    rows: int
    cols: int
    steps: tuple[Step, ...]

    def to_data(self) -> dict:
        return {"rows": self.rows, "cols": self.cols, "steps": [[s.form, list(s.args)] for s in self.steps]}

    @classmethod
    def from_data(cls, d: dict):
        return cls(int(d["rows"]), int(d["cols"]), tuple(Step(str(f), tuple(a)) for f, a in d["steps"]))
