"""The phases of ``zcspec verify`` that put ONNX models to the front end and run what imports (checks/verify.py
says when each runs, and in which order). Each records into a VerifyResult, checking a model that
imports with ``check_case`` (checks/verify_one_case.py) under its own artefact phase:

- ``check_frontend_cases(result, soc)``: the crafted models of checks/frontend_cases.py; a refusal must
  be the expected one, at import or (``at="compile"``) when the imported graph is compiled; a model that
  must import runs through both runtimes against onnxruntime.
- ``check_shipped_cases(result, cases, soc, fail_fast)``: the pytorch models shipped in the onnx package
  (checks/shipped_pytorch_cases.py), held to their shipped outputs.
- ``check_dtype_sweep(result, cases, soc, progress, fail_fast)``: each op alone in a model, in each element
  type ONNX allows (checks/dtype_sweep_cases.py); ``ACCEPTED_UNCOMPUTABLE`` prefixes the error of one that
  imports and then fails on the device.
- ``check_node_tests(result, tests, progress, fail_fast)``: ONNX's backend node tests of the claimed ops
  (checks/onnx_node_cases.py), how each imports held to checks/conformance/imports.json.

The three taking ``fail_fast`` return False when it stopped the phase, True otherwise.
"""
from __future__ import annotations

import tempfile

import attrs

from zcspec.checks.campaign import check_observations
from zcspec.checks.conformance import import_record
from zcspec.checks.dtype_sweep_cases import KNOWN as SWEEP_KNOWN
from zcspec.checks.dtype_sweep_cases import SweepCase, record_differences, refusal_record, saved
from zcspec.checks.dtype_sweep_cases import check_refusal as check_sweep_refusal
from zcspec.checks.frontend_case import write_case_file
from zcspec.checks.frontend_cases import check_refusal, frontend_cases
from zcspec.checks.input_file_observer import observe_input_file, outcome_of
from zcspec.checks.models import load_graph, parse_shape, zoo_path
from zcspec.checks.onnx_node_cases import NodeTests, label
from zcspec.checks.scenario import Scenario
from zcspec.checks.shipped_pytorch_cases import judge as judge_shipped
from zcspec.checks.shipped_pytorch_cases import label as shipped_label
from zcspec.checks.verify_cases import case_runs
from zcspec.checks.verify_one_case import check_case
from zcspec.checks.verify_result import Finding, NodeTestResult, SweepResult, VerifyResult, record_error
from zcspec.impl.compiler.compile import compile as compile_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform.errors import BadInput


def check_frontend_cases(result: VerifyResult, soc: str) -> None:
    """Each crafted model of checks/frontend_cases.py: a refusal must be the expected one (an error of the
    run otherwise); a model that must import runs through both runtimes against onnxruntime on its file;
    one that must be refused when compiled (``at="compile"``) must import, and compiling its graph with
    the case's options (the SoC's defaults when it gives none) must be that refusal, judged as an import's."""
    with tempfile.TemporaryDirectory(prefix="zcspec-frontend-") as folder:
        for case in frontend_cases():
            label_ = f"front-end case {case.name}"
            path = write_case_file(case, folder)
            try:
                graph = load_graph(path)   # what `zcspec plan FILE` / `zcspec verify FILE` load it with
            except BadInput as e:
                observed = _judge_input_file(result, label_, path, e)
                why = (f"refused at import ({type(e).__name__}: {e}); the file must import and be refused "
                       f"when compiled with a {case.refused} ({case.why})") if case.at == "compile" \
                    else check_refusal(case, e)
                if why:   # a file that must import, refused: the code under test refused a valid input
                    record_error(result, label_, why, "refusal" if case.refused is None else "check")
                result.artefacts.case("frontend", label_, refused=f"{type(e).__name__}: {e}", problem=why, **observed)
                continue
            except Exception as e:  # a crash of the front end
                record_error(result, label_, f"{type(e).__name__}: {e}", "crash")
                result.artefacts.case("frontend", label_, error=result.errors[-1][1])
                continue
            observed = _judge_input_file(result, label_, path, None, graph)
            if case.refused is None or case.at == "compile":   # the case's own entry is its run's or its compile's
                result.artefacts.case("frontend", f"{label_} [input file]", **observed)
            if case.at == "compile":
                _check_compile_refusal(result, label_, case, graph, soc)
                continue
            if case.refused:
                record_error(result, label_, f"imports; expected a {case.refused} naming {', '.join(case.culprits)} "
                                       f"({case.why})", "check")
                result.artefacts.case("frontend", label_, problem=result.errors[-1][1], **observed)
                continue
            scenario = Scenario("execution", graph, CompileOptions(soc=soc), case_runs("execution", graph, path))
            check_case(result, f"{label_} [execution]", scenario, prove=False, phase="frontend")


def check_model_files(result: VerifyResult, models, shapes=(), values=()) -> None:
    """Each ONNX file among verify's ``models`` (``zoo:NAME``, a path ending in .onnx), imported as verify
    imports it (with the ``--shape`` and ``--value`` texts given), judged by the input-file claims with the graph
    the import returned: the file's values keep the shapes and types ONNX infers (INPUT-IMPORT-TYPES). A file
    that does not import is the zoo cases' error, not judged twice."""
    for model in models:
        path = zoo_path(model[4:]) if model.startswith("zoo:") else model
        if not path.endswith(".onnx"):
            continue
        try:
            graph = load_graph(path, shapes, values)
        except Exception:   # the zoo cases load it too and report why
            continue
        label_, given = f"{model} [input file]", tuple(parse_shape(s)[0] for s in shapes)
        result.artefacts.case("frontend", label_, **_judge_input_file(result, label_, path, None, graph, given))


def _judge_input_file(result: VerifyResult, label_: str, path: str, error: BaseException | None,
                      graph=None, shapes_given: tuple[str, ...] = ()) -> dict:
    """Judge the file at ``path`` and its import's outcome (``error``: its refusal, None when it imported as
    ``graph``) by the input-file claims (spec/invariants/input_file.py); the findings go into ``result``.
    Returns the observation and its report as the case artefact's arguments ({} when the file cannot be
    transcribed)."""
    observation = observe_input_file(path, outcome_of(error), shapes_given, imported=graph)
    if observation is None:
        return {}
    reports, _ = check_observations(label_, [observation], result.tally)
    result.findings.extend(Finding(label_, v) for v in reports[0].violations)
    return {"observations": [observation], "reports": reports}


def _check_compile_refusal(result: VerifyResult, label_: str, case, graph, soc: str) -> None:
    """Compile ``graph`` (``case`` imported it) with the case's options: its refusal must be the expected
    one (class and culprits, as an import refusal), a compile that succeeds or crashes is an error of the run."""
    options = case.options if case.options is not None else CompileOptions(soc=soc)
    try:
        compile_model(graph, options)
    except BadInput as e:
        why = check_refusal(case, e)
        if why:
            record_error(result, label_, f"when compiled with {_options_text(options)}: {why}", "check")
        result.artefacts.case("frontend", label_, at="compile", refused=f"{type(e).__name__}: {e}", problem=why)
        return
    except Exception as e:  # a crash of the compiler
        record_error(result, label_, f"compiling with {_options_text(options)}: {type(e).__name__}: {e}", "crash")
        result.artefacts.case("frontend", label_, at="compile", error=result.errors[-1][1])
        return
    record_error(result, label_, f"compiles with {_options_text(options)}; expected a {case.refused} naming "
                                 f"{', '.join(case.culprits)} ({case.why})", "check")
    result.artefacts.case("frontend", label_, at="compile", problem=result.errors[-1][1])


def _options_text(options: CompileOptions) -> str:
    """``options`` as its SoC and the fields it sets away from the defaults: "soc='nozc', strategy='compact'"."""
    default = CompileOptions()
    return ", ".join(f"{f.name}={getattr(options, f.name)!r}" for f in attrs.fields(CompileOptions)
                     if f.name == "soc" or getattr(options, f.name) != getattr(default, f.name))


def check_shipped_cases(result: VerifyResult, cases, soc: str, fail_fast: bool) -> bool:
    """Each shipped pytorch model (checks/shipped_pytorch_cases.py) imported, compiled and run on both
    runtimes, held to its shipped outputs: anything else is an error naming the case. Returns False when
    ``fail_fast`` stopped the phase."""
    failed = 0
    for i, case in enumerate(cases, 1):
        label_ = shipped_label(case.name)
        r, outcome = judge_shipped(case, soc)
        if outcome is not None:
            failed += 1
            record_error(result, label_, outcome.message, outcome.kind)
        result.artefacts.case("shipped-pytorch", label_, status=r.status, stage=r.stage, detail=r.detail,
                              frozen=list(r.frozen))
        if fail_fast and result.failing():
            result.shipped_cases = (i, failed)
            return False
    result.shipped_cases = (len(cases), failed)
    return True


# What a model of the dtype sweep that imports and then fails on the device is.
ACCEPTED_UNCOMPUTABLE = "the front end accepted what the device cannot compute"


def check_dtype_sweep(result: VerifyResult, cases, soc: str, progress, fail_fast: bool) -> bool:
    """Each model of checks/dtype_sweep_cases.py: refused at import naming its node and element type, or
    imported and run through both runtimes against onnxruntime on its file, with no call failing, no crash
    and no claim violated. A recorded failure (``KNOWN``) must still fail; one that passes is an error (its
    record is stale). The models refused at import must be those the refusal record lists (of ``cases``).
    Returns False when ``fail_fast`` stopped the phase."""
    sweep = result.dtype_sweep = SweepResult()
    refused, record = [], refusal_record()
    with tempfile.TemporaryDirectory(prefix="zcspec-dtype-sweep-") as folder:
        for i, case in enumerate(cases, 1):
            if i % 200 == 0:
                progress(f"  dtype sweep model {i}/{len(cases)}")
            own = VerifyResult(artefacts=result.artefacts)   # judged apart: a known failure must not fail the run
            outcome = _sweep_case(own, case, folder, soc)
            why = SWEEP_KNOWN.get(case.key)
            if why is not None:
                if own.failing():
                    sweep.known.append((case.label, why))
                else:
                    now = "is refused naming its node and type" if outcome == "refused" else "passes"
                    record_error(result, case.label, f"recorded as failing ({why}) but {now}: its record in "
                                               "checks/dtype_sweep_cases.py KNOWN is stale", "check")
                    sweep.failed.append(case.label)
            else:
                result.tally.merge(own.tally)
                result.findings.extend(own.findings)
                result.errors.extend(own.errors)
                result.error_kinds.extend(own.error_kinds)
                if own.failing():
                    sweep.failed.append(case.label)
                elif outcome == "refused":
                    sweep.refused.append(case.label)
                elif own.unjudged:
                    sweep.unjudged.append(case.label)
            sweep.run += outcome == "ran"
            refused += [case.node] if outcome == "refused" else []
            if fail_fast and result.failing():
                return False
    labels = {case.node: case.label for case in cases}
    for node, why in record_differences(refused, record & labels.keys()):
        if labels[node] not in sweep.failed:   # a model that failed otherwise has its error already
            record_error(result, labels[node], why, "check")
            sweep.failed.append(labels[node])
    return not (fail_fast and result.failing())


def _sweep_case(own: VerifyResult, case: SweepCase, folder: str, soc: str) -> str:
    """Judge one model of the dtype sweep into ``own``; what it did: "refused", or "ran" (also when a
    failure of it is recorded in ``own``), or "did not import"."""
    path = saved(case, folder)
    try:
        graph = load_graph(path)
    except BadInput as e:
        if problem := check_sweep_refusal(case, e):
            record_error(own, case.label, problem, "check")
        own.artefacts.case("dtype-sweep", case.label, refused=f"{type(e).__name__}: {e}", problem=problem)
        return "refused"
    except Exception as e:  # a crash of the front end
        record_error(own, case.label, f"{type(e).__name__}: {e}", "crash")
        own.artefacts.case("dtype-sweep", case.label, error=own.errors[-1][1])
        return "did not import"
    own.artefacts.case("dtype-sweep", f"{case.label} [input file]",
                       **_judge_input_file(own, f"{case.label} [input file]", path, None, graph))
    run = {"runtime": "differential", "zero_copy": True, "onnx": path, "values": {}}
    check_case(own, case.label, Scenario("execution", graph, CompileOptions(soc=soc), {"runs": [run]}),
               prove=False, phase="dtype-sweep")
    # a crash of the run, or a call that failed on valid buffers: the device could not compute what was accepted
    own.errors[:] = [(c, f"{ACCEPTED_UNCOMPUTABLE}: {m}") for c, m in own.errors]
    for note in own.failed_calls:
        record_error(own, case.label, f"{ACCEPTED_UNCOMPUTABLE}: {note.run}: {note.reason}", "check")
    return "ran"


def check_node_tests(result: VerifyResult, tests: NodeTests, progress, fail_fast: bool) -> bool:
    """Check every node test case into ``result``; False when a fail-fast run must stop. A case fails
    on any finding, crash or failed valid call, and on any output left unjudged (its oracle is
    ONNX's expected outputs: one missing is an error of the case, recorded as a crash of it)."""
    nodes = result.node_tests = NodeTestResult(refused=list(tests.refused), known=list(tests.known))
    for name, why in tests.broken:   # refused naming no unsupported feature, or the front end crashed
        record_error(result, f"{label(name)} [import]", why, "refusal" if why.split(":")[0] in _refusal_names() else "crash")
        nodes.failed.append(label(name))
    record = import_record.load_record()
    for name, why in import_record.differences(import_record.observed(tests), record, [n for n, _ in tests.frozen]):
        record_error(result, f"{label(name)} [import]", f"{why} ({import_record.RECORD.name})", "check")
        nodes.failed.append(label(name))
    for name, why in (*tests.refused, *tests.broken):
        result.artefacts.case("node-tests", f"{label(name)} [import]", refused=why)
    if fail_fast and result.failing():
        return False
    for i, (case, scenario) in enumerate(tests.cases, 1):
        if i % 100 == 0:
            progress(f"  ONNX node test {i}/{len(tests.cases)}")
        before = (len(result.findings), len(result.errors), len(result.tally.notes))
        check_case(result, case, scenario, prove=False, phase="node-tests")   # execution cases have no proofs
        nodes.run += 1
        for note in result.tally.notes[before[2]:]:
            if not note.failed:
                record_error(result, case, f"output not judged by the node test's expected outputs: {note.reason}", "check")
        if (len(result.findings), len(result.errors), len(result.tally.notes)) != before:
            nodes.failed.append(case)
        if fail_fast and result.failing():
            return False
    return True


def _refusal_names() -> set[str]:
    """The class names of impl's refusals (BadInput and its subclasses under zcspec.impl): an import error
    of a node test arrives as text ("Name: message"), its class known by name only."""
    found, todo = set(), [BadInput]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return found
