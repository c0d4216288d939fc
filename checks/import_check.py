"""Judge a front end someone else wrote by the spec's input-file claims (the ``input_file`` concern).

A front end is any function that takes a file's path and either returns (the file is accepted) or raises
(refused). ``judge_import(path, importer)`` runs it on the file, transcribes the file with the onnx
package or the json module (checks/input_file_observer.py, never the importer), and checks the result:
an accepted file that holds a node of a wrong input count, an unknown op, a cycle, a read of a tensor
nothing writes, a name written twice or a dim that is not fixed is a violation, as is a refusal whose
message names none of the file's faults. ``crafted_files(folder)`` writes the files verify's front-end
cases hold (checks/frontend_cases.py, graph JSON ones included), so a front end can be put to the test on
them as zcspec's own is. docs/frontend.md, "Judging your own front end", shows both.
"""
from __future__ import annotations

from typing import Callable, Iterable

from zcspec.checks.frontend_case import write_case_file
from zcspec.checks.frontend_cases import frontend_cases
from zcspec.checks.input_file_observer import observe_input_file, outcome_of
from zcspec.spec.check import Report, check


def judge_import(path: str, importer: Callable[[str], object], *, refusals: tuple[type[BaseException], ...] = (Exception,),
                 shapes_given: Iterable[str] = ()) -> Report | None:
    """The input-file claims' report on ``importer(path)``: it accepted the file when it returned, refused it
    when it raised one of ``refusals`` (any other exception propagates: a crash, not a refusal). What it
    returned is judged by INPUT-IMPORT-TYPES when it shows its tensors' types: a zcspec IR graph, or a mapping
    tensor name -> (shape, dtype name).
    ``shapes_given``: the inputs whose shape the caller fixes beside the file (as ``--shape`` does). None
    when the file is not one the observer can transcribe (not an ONNX model or a zcspec graph JSON file)."""
    imported = None
    try:
        imported = importer(path)
        error = None
    except refusals as e:
        error = e
    observation = observe_input_file(path, outcome_of(error), tuple(shapes_given), imported=imported)
    return None if observation is None else check(observation)


def crafted_files(folder: str) -> list[str]:
    """Write every front-end case's file into ``folder`` (ONNX models as ``NAME.onnx``, graph JSON texts as
    ``NAME.json``) and return their paths, in the cases' order."""
    return [write_case_file(case, folder) for case in frontend_cases()]
