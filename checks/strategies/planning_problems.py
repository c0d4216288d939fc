"""Planning problems for any memory planner: draw with zcspec, plan with yours, check with zcspec.

``planning_problems()`` draws a :class:`PlanningProblem`: the steps of a program in execution order
and the tensors they read and write, as plain data (names, byte sizes, step indices) that the
planner of any compiler can read, as Python objects or as JSON (:meth:`PlanningProblem.to_dict`).
The planner answers with an offset per tensor and, if it computes them, the lifetimes it planned
with; :meth:`PlanningProblem.plan_json` turns that answer into a zcspec plan (the general form of
docs/foreign-planners.md, one ``activations`` arena). The plan's offsets and lifetimes are the
planner's claims, but what each step reads and writes comes from the problem, so a planner that
computes a wrong lifetime breaks a claim (LAYOUT-NO-OVERLAP, LAYOUT-LIFETIME-COVERS-USES or -WRITES)
instead of certifying itself::

    @settings(deadline=None)  # the first check imports the checker, slower than Hypothesis's 200 ms
    @given(planning_problems())
    def test_my_planner(problem):
        offsets, lifetimes = my_planner(problem.to_dict())
        zcspec.assert_plan_ok(problem.plan_json(offsets, lifetimes=lifetimes))

Draws shrink toward fewer steps and tensors, smaller sizes, ops that read nothing and have one
output, no views, no in-place steps, no graph inputs or outputs, and one stream.
"""
from __future__ import annotations

import functools
import operator
from typing import Mapping

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from zcspec.checks.errors import PlanFormatError

ARENA = "activations"
KINDS = ("op", "view", "inplace")  # in shrinking order: a plain op first
MAX_INPUTS = 3   # graph inputs per problem
MAX_READS = 3    # tensors one op reads
_OUTPUT = st.sampled_from((False, False, False, True))  # one tensor in four is a graph output


@attrs.frozen
class ProblemTensor:
    """One tensor of a :class:`PlanningProblem`; steps are indices into its ``steps``.

    - ``name``: unique in the problem.
    - ``size``: the bytes it occupies, at least 1 (a view or an in-place result: its target's size).
    - ``producer``: the step that writes it; None for a graph input, which the caller writes before
      step 0 and which is live from step 0.
    - ``consumers``: the steps that read it, ascending, each after ``producer``.
    - ``graph_input``: the caller provides it (exactly when ``producer`` is None).
    - ``graph_output``: the caller reads it after the last step, so it is live to the last step.
    - ``alias_of``: a view of that tensor (a Reshape): the same bytes, which ``producer`` gives a new
      name without computing them (its life starts there all the same). It must sit at its target's
      offset.
    - ``in_place_of``: ``producer`` computes this tensor in place, element by element, over the bytes
      of that tensor, one of its inputs, which no step reads afterwards. It must sit at its target's
      offset.

    At most one of ``alias_of`` and ``in_place_of`` is set; the target comes earlier in ``tensors``.
    """

    name: str
    size: int
    producer: int | None
    consumers: tuple[int, ...] = ()
    graph_input: bool = False
    graph_output: bool = False
    alias_of: str | None = None
    in_place_of: str | None = None

    @property
    def shares(self) -> str | None:
        """The tensor whose bytes this one sits in (a view's or an in-place result's target), or None."""
        return self.alias_of or self.in_place_of


@attrs.frozen
class PlanningProblem:
    """A program to plan memory for (module doc).

    - ``steps``: op names in execution order; tensors name a step by its index here.
    - ``tensors``: the :class:`ProblemTensor` s in the order they come into being (graph inputs, then
      each step's outputs), so a view's or in-place result's target comes before it.
    - ``streams``: the stream each step runs on, one per step; empty when every step runs on one.
    - ``control``: ``(before, after)`` step pairs: ``after`` waits for ``before`` beyond its data inputs.
      With several streams every step waits for the step before it, by a data or a control edge, so
      the streams run the steps in ``steps`` order and lifetimes counted in steps stay sound.
    """

    steps: tuple[str, ...]
    tensors: tuple[ProblemTensor, ...]
    streams: tuple[int, ...] = ()
    control: tuple[tuple[int, int], ...] = ()

    @functools.cached_property
    def tensor(self) -> dict[str, ProblemTensor]:
        """Tensors by name."""
        return {t.name: t for t in self.tensors}

    def lifetimes(self) -> dict[str, tuple[int, int]]:
        """Each tensor's true lifetime, ``(first, last)`` steps inclusive: from its producer (a graph
        input: step 0) to its last consumer (a graph output: the last step; unread: its producer).
        A view or in-place result and its target are one piece of memory live over both lifetimes."""
        end = len(self.steps) - 1
        out = {}
        for t in self.tensors:
            first = 0 if t.producer is None else t.producer
            out[t.name] = (first, end if t.graph_output else max(t.consumers, default=first))
        return out

    def to_dict(self) -> dict:
        """The problem as JSON data (lists, dicts, ints, strs, bools, None) with the fields' names."""
        return {"steps": list(self.steps),
                "tensors": [{**attrs.asdict(t), "consumers": list(t.consumers)} for t in self.tensors],
                "streams": list(self.streams), "control": [list(pair) for pair in self.control]}

    def plan_json(self, offsets: Mapping[str, int], *, arena: int | None = None,
                  lifetimes: Mapping[str, tuple[int, int]] | None = None, alignment: int = 1) -> dict:
        """The zcspec plan (format ``zcspec-plan`` version 1) of a planner's answer to this problem.

        ``offsets``: tensor name -> its byte offset in the one arena, ``activations``, for every tensor
        (a view and an in-place result: their target's offset). ``arena``: the arena's size in bytes
        (default: the end of the highest tensor). ``lifetimes``: tensor name -> the ``(first, last)``
        steps, inclusive, the planner keeps it intact for, for every tensor (default: :meth:`lifetimes`,
        the true ones). ``alignment``: the multiple the planner promises every offset of a tensor that
        owns its memory is (1: none).

        The offsets, the arena's size and the lifetimes are the planner's claims; the reads and writes of
        the steps (``consumers``, ``producers``, ``writes``, ``in_place``), the graph's inputs and
        outputs, views, streams and control edges are the problem's. PlanFormatError when ``offsets``
        or ``lifetimes`` miss a tensor, name one the problem lacks, or hold a value that is not an
        integer (a pair of them).
        """
        off = {name: _index(v, "offsets", name) for name, v in _covering("offsets", offsets, self.tensor).items()}
        given = self.lifetimes() if lifetimes is None else _covering("lifetimes", lifetimes, self.tensor)
        life = {name: _pair(v, name) for name, v in given.items()}
        produced = [t for t in self.tensors if t.producer is not None]
        plan = {
            "format": "zcspec-plan", "version": 1, "order": list(self.steps),
            "tensors": [{"name": t.name, "region": ARENA, "offset": off[t.name], "size": t.size,
                         "aligned_size": t.size, "first": life[t.name][0], "last": life[t.name][1],
                         "block": None, "zero_copy": False, "alias_of": t.shares} for t in self.tensors],
            "arenas": {ARENA: {"kind": "activations", "alignment": alignment}},
            "regions": {ARENA: max(off[t.name] + t.size for t in self.tensors) if arena is None else arena},
            "graph_inputs": [t.name for t in self.tensors if t.graph_input],
            "graph_outputs": [t.name for t in self.tensors if t.graph_output],
            "consumers": {t.name: list(t.consumers) for t in self.tensors if t.consumers},
            "producers": {t.name: self.steps[t.producer] for t in produced},
            "writes": {t.name: [t.producer] for t in produced},
        }
        # An element-wise step reads each byte of its target where it writes the result's (to = the
        # result's offset): a planner that moved the result elsewhere shows as a shifted read.
        in_place = [{"step": t.producer, "tensor": t.name, "writes": [{"lo": off[t.name], "hi": off[t.name] + t.size}],
                     "reads": [{"lo": off[t.in_place_of], "hi": off[t.in_place_of] + t.size, "to": off[t.name]}]}
                    for t in produced if t.in_place_of is not None]
        if in_place:
            plan["in_place"] = in_place
        if self.streams:
            plan["streams"] = dict(zip(self.steps, self.streams))
            waits: dict[str, list[str]] = {}
            for before, after in self.control:
                waits.setdefault(self.steps[after], []).append(self.steps[before])
            plan["control"] = waits
        return plan


def _covering(what: str, mapping: Mapping, tensors: Mapping) -> Mapping:
    missing = [n for n in tensors if n not in mapping]
    if missing:
        raise PlanFormatError(f"{what} has no entry for tensor {missing[0]!r} ({len(missing)} missing): give "
                              "every tensor of the problem one (a view or an in-place result too: it sits at "
                              "its target's offset)", tensor=missing[0])
    unknown = [n for n in mapping if n not in tensors]
    if unknown:
        raise PlanFormatError(f"{what} names tensor {unknown[0]!r}, which the problem does not have; "
                              f"its tensors are {sorted(tensors)}", tensor=str(unknown[0]))
    return mapping


def _index(value, what: str, name: str) -> int:
    """An integer from a planner's answer (numpy integers too); never a float rounded quietly."""
    try:
        return operator.index(value)
    except TypeError as e:
        raise PlanFormatError(f"{what}[{name!r}]={value!r} is not an integer", tensor=name) from e


def _pair(value, name: str) -> tuple[int, int]:
    try:
        first, last = value
    except (TypeError, ValueError) as e:
        raise PlanFormatError(f"lifetimes[{name!r}]={value!r} is not a (first, last) pair of steps",
                              tensor=name) from e
    return _index(first, "lifetimes", name), _index(last, "lifetimes", name)


# -- the strategy ---------------------------------------------------------------------------------

def planning_problems(*, min_steps: int = 1, max_steps: int = 8, max_tensors: int = 10, max_size: int = 4096,
                      streams: int = 1, aliases: bool = True,
                      in_place: bool = True) -> st.SearchStrategy[PlanningProblem]:
    """Problems of ``min_steps`` to ``max_steps`` steps and at most ``max_tensors`` tensors (each step
    makes one or two, and up to three graph inputs come first) of 1 to ``max_size`` bytes. Steps run
    on ``streams`` streams, ordered by control edges; ``aliases`` allows views, ``in_place`` steps that
    compute in place. InvalidArgument, at once, for bounds that allow no problem."""
    _check_int("min_steps", min_steps, 1, "every problem has a step")
    _check_int("max_steps", max_steps, min_steps, f"min_steps={min_steps!r}")
    _check_int("max_tensors", max_tensors, min_steps, f"min_steps={min_steps!r}: every step makes a tensor")
    _check_int("max_size", max_size, 1, "every tensor has a byte")
    _check_int("streams", streams, 1, "every step runs on a stream")
    for name, value in (("aliases", aliases), ("in_place", in_place)):
        if not isinstance(value, bool):
            raise InvalidArgument(f"planning_problems({name}={value!r}): expected True or False")
    kinds = ("op",) + ("view",) * aliases + ("inplace",) * in_place
    return _problems(st.integers(min_steps, min(max_steps, max_tensors)), max_tensors, st.integers(1, max_size),
                     streams, st.sampled_from(kinds))


def _check_int(name: str, value, lo: int, why: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidArgument(f"planning_problems({name}={value!r}): expected an int")
    if value < lo:
        raise InvalidArgument(f"planning_problems({name}={value!r}): must be at least {lo} ({why})")


class _Draft:
    """The problem being drawn: its tensors so far, which may still be read, and who shares whose bytes."""

    def __init__(self, spare: int):
        self.spare = spare  # tensors allowed beyond one per step
        self.tensors: dict[str, ProblemTensor] = {}
        self.pool: list[str] = []  # tensors later steps may read
        self.root: dict[str, str] = {}
        self.reads: list[list[str]] = []  # per step

    def add(self, t: ProblemTensor) -> None:
        self.tensors[t.name] = t
        self.root[t.name] = self.root[t.shares] if t.shares else t.name
        self.pool.append(t.name)

    def read(self, step: int, names) -> None:
        self.reads.append(list(names))
        for n in names:
            self.tensors[n] = attrs.evolve(self.tensors[n], consumers=self.tensors[n].consumers + (step,))

    def family(self, name: str) -> list[ProblemTensor]:
        return [t for n, t in self.tensors.items() if self.root[n] == self.root[name]]

    def overwritable(self, name: str) -> bool:
        """Whether a step may compute in place over ``name``: the caller neither gave nor takes its bytes."""
        return not any(t.graph_input or t.graph_output for t in self.family(name))

    def fresh(self) -> str:
        return f"t{sum(not t.graph_input for t in self.tensors.values())}"


@st.composite
def _problems(draw, step_counts, max_tensors: int, sizes, streams: int, kinds) -> PlanningProblem:
    n = draw(step_counts)
    d = _Draft(max_tensors - n)
    for i in range(draw(st.integers(0, min(MAX_INPUTS, d.spare)))):
        d.add(ProblemTensor(f"x{i}", draw(sizes), None, graph_input=True))
    d.spare -= len(d.tensors)
    steps = [_step(draw, d, k, draw(kinds), sizes) for k in range(n)]
    lanes = tuple(draw(st.integers(0, streams - 1)) for _ in steps) if streams > 1 else ()
    return PlanningProblem(tuple(steps), tuple(d.tensors.values()), lanes, _control(d, lanes))


def _step(draw, d: _Draft, k: int, kind: str, sizes) -> str:
    """Draw step ``k`` of ``kind`` (a plain op when nothing fits the kind) into ``d``; its name."""
    targets = {"op": [], "view": d.pool, "inplace": [n for n in d.pool if d.overwritable(n)]}[kind]
    if not targets:  # a plain op, or a view or in-place step with nothing to work on: an op instead
        reads = draw(st.lists(st.sampled_from(d.pool), max_size=MAX_READS, unique=True)) if d.pool else []
        d.read(k, reads)
        extra = draw(st.integers(0, 1)) if d.spare else 0
        d.spare -= extra
        for _ in range(1 + extra):
            d.add(ProblemTensor(d.fresh(), draw(sizes), k, graph_output=draw(_OUTPUT)))
        return f"op{k}"
    target = draw(st.sampled_from(targets))
    size = d.tensors[target].size
    if kind == "view":
        d.read(k, [target])
        d.add(ProblemTensor(d.fresh(), size, k, graph_output=draw(_OUTPUT), alias_of=target))
        return f"view{k}"
    family = {t.name for t in d.family(target)}
    others = [n for n in d.pool if n not in family]
    d.read(k, [target] + (draw(st.lists(st.sampled_from(others), max_size=1)) if others else []))
    d.pool = [n for n in d.pool if n not in family]  # overwritten: nothing reads the old bytes again
    d.add(ProblemTensor(d.fresh(), size, k, graph_output=draw(_OUTPUT), in_place_of=target))
    return f"inplace{k}"


def _control(d: _Draft, lanes: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """A control edge into each step on another stream than the step before it, unless it reads an
    output of that step (a data edge then orders the two already)."""
    out = []
    for k in range(1, len(lanes)):
        fed = any(d.tensors[n].producer == k - 1 for n in d.reads[k])
        if lanes[k] != lanes[k - 1] and not fed:
            out.append((k - 1, k))
    return tuple(out)
