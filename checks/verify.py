"""The main job: every applicable invariant over the zoo, Z3 layout proofs, a bounded random
campaign and the corpus; per-invariant counts of the cases that exercised it.

``verify(config)`` returns a VerifyResult; ``checks/cli/verify.py`` prints it.
The run fails on any violation, any proof that is not "proved" (unknown is
never a pass), any corpus entry that regressed, and any invariant that no case
exercised (a claim never put to the test is not a verified claim).
"""
from __future__ import annotations

import os
import time
from typing import Callable

import attrs

from zcspec.checks.campaign import Tally, run_campaign
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.execution import default_runtimes
from zcspec.checks.models import parse_value
from zcspec.checks.proofs.z3_layout import prove_layout
from zcspec.checks.replay import corpus_files, replay
from zcspec.checks.scenario import KINDS, OBSERVERS, Scenario, observe
from zcspec.checks.strategies.scenarios import scenarios
from zcspec.checks.zoo import load
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.spec.observables import to_data


@attrs.frozen
class VerifyConfig:
    models: tuple[str, ...]
    strategies: tuple[str, ...] = ("ge", "compact")
    soc: str = "ascend910b"
    kinds: tuple[str, ...] = KINDS
    examples: int = 150
    seed: int = 0
    proofs: bool = True
    corpus: bool = True
    shapes: tuple[str, ...] = ()   # --shape texts for the ONNX models named
    values: tuple[str, ...] = ()   # --value texts for the ONNX models named


@attrs.define
class Finding:
    case: str
    violation: object
    rows: list = attrs.Factory(list)


@attrs.define
class VerifyResult:
    tally: Tally = attrs.Factory(Tally)
    findings: list = attrs.Factory(list)
    proofs: list = attrs.Factory(list)          # (case, ProofResult)
    corpus: list = attrs.Factory(list)          # ReplayResult
    counterexample: object = None               # the campaign's shrunk failure
    errors: list = attrs.Factory(list)          # (case, message): a crash of the code under test
    seconds: float = 0.0

    def unexercised(self, ids) -> list[str]:
        return [i for i in ids if not self.tally.exercised[i]]

    def ok(self, ids) -> bool:
        return (not self.findings and not self.errors and self.counterexample is None
                and all(p.passed for _, p in self.proofs) and all(r.as_expected for r in self.corpus)
                and not self.unexercised(ids))


def _rows(observation, violation) -> list:
    """Plan rows of the tensors a violation names (for the report)."""
    tensor = getattr(observation, "tensor", None)
    if not isinstance(tensor, dict):
        return []
    text = violation.culprit + " " + str(violation.values)
    return [t for name, t in tensor.items() if f"'{name}'" in text]


def _zoo_cases(config: VerifyConfig):
    for model in config.models:
        graph = load(model, config.shapes, config.values)
        for strategy in config.strategies:
            options = CompileOptions(soc=config.soc, strategy=strategy)
            for kind in config.kinds:
                if kind == "execution" and strategy != config.strategies[0]:
                    continue   # runtimes are checked on one plan per model; layouts on every strategy
                if kind in OBSERVERS:
                    yield (f"{model} [{kind}, {strategy}]",
                           Scenario(kind, graph, options, _runtime(kind, graph, model, config.values)))
    if "execution" in config.kinds:
        # HCCL without zero-copy support (V1-HCCL-COPY) exists only on SoCs that cannot refresh it.
        graph = load("builtin:collectives")
        for soc in ("legacy", "ascend310p"):
            yield (f"builtin:collectives [execution, {soc}]",
                   Scenario("execution", graph, CompileOptions(soc=soc), _runtime("execution", graph)))


def _runtime(kind: str, graph, source: str = "", values: tuple[str, ...] = ()) -> dict:
    """The runs of an execution case. A graph imported from an ONNX file ``source`` is judged against
    onnxruntime on that file (its differential runs name it, with the inputs ``values`` froze)."""
    if kind != "execution":
        return {}
    runs = default_runtimes(graph)
    if source.endswith(".onnx"):
        frozen = dict(parse_value(v) for v in values)
        runs = [{**r, "onnx": os.path.abspath(source), "values": frozen} if r["runtime"] == "differential" else r
                for r in runs]
    return {"runs": runs}


def _check_case(result: VerifyResult, case: str, scenario: Scenario, *, prove: bool) -> None:
    try:
        observations = observe(scenario)
    except Exception as e:  # the code under test crashed: a finding of its own
        result.errors.append((case, f"{type(e).__name__}: {e}"))
        return
    for obs in observations:
        report = check(obs)
        result.tally.add([report])
        for v in report.violations:
            result.findings.append(Finding(case, v, _rows(obs, v)))
        if scenario.kind == "plan" and prove:
            result.proofs.append((case, _prove(obs)))


def _prove(plan_obs):
    return prove_layout(to_data(plan_obs))


def verify(config: VerifyConfig, progress: Callable[[str], None] = lambda s: None) -> VerifyResult:
    result = VerifyResult()
    start = time.perf_counter()
    cases = list(_zoo_cases(config))
    for i, (case, scenario) in enumerate(cases, 1):
        progress(f"[{i}/{len(cases)}] {case}")
        _check_case(result, case, scenario, prove=config.proofs)
    if config.examples:
        progress(f"random campaign: {config.examples} scenarios, seed {config.seed}")
        kinds = tuple(k for k in config.kinds if k != "execution")
        campaign = run_campaign(scenarios(kinds=kinds), max_examples=config.examples, seed=config.seed,
                                on_case=lambda n: progress(f"  campaign case {n}") if n % 50 == 0 else None)
        result.tally.merge(campaign.tally)
        result.counterexample = campaign.counterexample
    if config.corpus:
        for path in corpus_files():
            progress(f"corpus {path}")
            result.corpus.append(replay(Counterexample.load(path)))
    result.seconds = time.perf_counter() - start
    return result
